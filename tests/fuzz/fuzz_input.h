// What the installer's libFuzzer targets (tests/fuzz/*_fuzz.cpp) share: the property check that
// names a failed property and aborts, the input read as leading lines and the rest, or as
// sections split at lines "%%", and the span of a text that an edit replaced.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::fuzz {

// Stops the fuzzer, naming the property, when it does not hold.
inline void Check(bool ok, const char* property) {
  if (ok) return;
  std::fprintf(stderr, "property failed: %s\n", property);
  std::abort();
}

// The fuzzer's input as text.
inline std::string InputText(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input's first N lines (without their '\n') and then the rest after them; nothing when the
// input holds fewer than N line breaks.
template <std::size_t N>
std::optional<std::array<std::string, N + 1>> LeadingLines(const std::uint8_t* data,
                                                           std::size_t size) {
  const std::string input = InputText(data, size);
  std::array<std::string, N + 1> parts;
  std::size_t at = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const auto end = input.find('\n', at);
    if (end == std::string::npos) return std::nullopt;
    parts[i] = input.substr(at, end - at);
    at = end + 1;
  }
  parts[N] = input.substr(at);
  return parts;
}

// The first `most` sections of a text split at lines "%%" (the separator "\n%%\n"); the text
// after them is left out. An empty text is one empty section.
inline std::vector<std::string> Sections(const std::string& text, std::size_t most) {
  std::vector<std::string> sections;
  std::size_t at = 0;
  while (at <= text.size() && sections.size() < most) {
    auto end = text.find("\n%%\n", at);
    if (end == std::string::npos) end = text.size();
    sections.push_back(text.substr(at, end - at));
    at = end + 4;
  }
  return sections;
}

// The span of `before` that differs from `after`: [prefix, before.size() - suffix), with the
// common prefix and suffix as long as they go. Equal texts give an empty span at the end, which
// lies inside no value: a caller checks `before == after` first.
struct Changed {
  std::size_t begin = 0;
  std::size_t end = 0;
};
inline Changed ChangedSpan(const std::string& before, const std::string& after) {
  std::size_t prefix = 0;
  while (prefix < before.size() && prefix < after.size() && before[prefix] == after[prefix]) {
    ++prefix;
  }
  std::size_t suffix = 0;
  while (suffix < before.size() - prefix && suffix < after.size() - prefix &&
         before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix]) {
    ++suffix;
  }
  return {prefix, before.size() - suffix};
}

}  // namespace dxshim::fuzz
