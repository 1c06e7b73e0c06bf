#include "shim/doctor/exposition_text.h"

#include <cctype>

namespace dxshim::doctor {
namespace {

bool NameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || std::isdigit(static_cast<unsigned char>(c)) != 0; }

void SkipBlanks(std::string_view text, std::size_t& at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
}

// A quoted string at `at` (its opening quote), unescaped; `at` moves past its closing quote.
std::optional<std::string> ReadQuoted(std::string_view text, std::size_t& at) {
  if (at >= text.size() || text[at] != '"') return std::nullopt;
  std::string out;
  for (++at; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '"') {
      ++at;
      return out;
    }
    if (c == '\\') {
      if (++at == text.size()) return std::nullopt;
      const char escaped = text[at];
      out += escaped == 'n' ? '\n' : escaped;  // \\ and \" are themselves
      continue;
    }
    out += c;
  }
  return std::nullopt;  // unterminated
}

// A metric or label name at `at`: an identifier, or a quoted string.
std::optional<std::string> ReadName(std::string_view text, std::size_t& at) {
  if (at < text.size() && text[at] == '"') return ReadQuoted(text, at);
  if (at >= text.size() || !NameStart(text[at])) return std::nullopt;
  const std::size_t start = at;
  while (at < text.size() && NameChar(text[at])) ++at;
  return std::string(text.substr(start, at - start));
}

// The labels between `{` (at `at`) and `}`; a quoted name among them (no `=` after it) is the
// metric's name, which `name` receives.
bool ReadLabels(std::string_view text, std::size_t& at, ExpositionSample& sample) {
  ++at;  // '{'
  while (true) {
    SkipBlanks(text, at);
    if (at < text.size() && text[at] == '}') {
      ++at;
      return true;
    }
    auto key = ReadName(text, at);
    if (!key) return false;
    SkipBlanks(text, at);
    if (at < text.size() && text[at] == '=') {
      ++at;
      SkipBlanks(text, at);
      auto value = ReadQuoted(text, at);
      if (!value) return false;
      sample.labels[*key] = std::move(*value);
    } else if (sample.name.empty()) {
      sample.name = std::move(*key);
    } else {
      return false;
    }
    SkipBlanks(text, at);
    if (at < text.size() && text[at] == ',') {
      ++at;
    } else if (at >= text.size() || text[at] != '}') {
      return false;
    }
  }
}

}  // namespace

std::optional<ExpositionSample> ParseExpositionLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::size_t at = 0;
  SkipBlanks(line, at);
  if (at >= line.size() || line[at] == '#') return std::nullopt;
  ExpositionSample sample;
  if (line[at] != '{') {
    auto name = ReadName(line, at);
    if (!name) return std::nullopt;
    sample.name = std::move(*name);
  }
  const std::size_t after_name = at;
  SkipBlanks(line, at);
  if (at < line.size() && line[at] == '{') {
    if (!ReadLabels(line, at, sample)) return std::nullopt;
  } else {
    at = after_name;
  }
  if (sample.name.empty()) return std::nullopt;
  const std::size_t blanks = at;
  SkipBlanks(line, at);
  if (at == blanks || at >= line.size()) return std::nullopt;  // a value, after a blank
  const std::size_t start = at;
  while (at < line.size() && line[at] != ' ' && line[at] != '\t') ++at;
  sample.value = std::string(line.substr(start, at - start));
  return sample;
}

}  // namespace dxshim::doctor
