// containerRuntimeEndpoint and healthzPort read from a kubelet config file, JSON or YAML.
#include "tests/support/node_standin/kubelet_config.h"

#include <cstddef>
#include <cstdlib>
#include <string_view>

namespace dxshim::test::node_standin {

namespace {

// A JSON string from TEXT[AT] == '"' (RFC 8259 §7), \uXXXX kept to the Basic Latin a pipe name
// uses.
std::optional<std::string> JsonString(std::string_view text, std::size_t at) {
  std::string out;
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= text.size()) return std::nullopt;
    switch (text[i]) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        if (i + 4 >= text.size()) return std::nullopt;
        const auto code = std::strtoul(std::string(text.substr(i + 1, 4)).c_str(), nullptr, 16);
        if (code > 0x7F) return std::nullopt;
        out += static_cast<char>(code);
        i += 4;
        break;
      }
      default:
        out += text[i];
        break;  // \" \\ \/
    }
  }
  return std::nullopt;
}

// The first KEY member's value: a string, or (healthzPort) the digits of a number.
std::optional<std::string> FromJson(std::string_view text, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\"";
  for (auto at = text.find(quoted); at != std::string_view::npos; at = text.find(quoted, at + 1)) {
    auto i = text.find_first_not_of(" \t\r\n", at + quoted.size());
    if (i == std::string_view::npos || text[i] != ':') continue;
    i = text.find_first_not_of(" \t\r\n", i + 1);
    if (i == std::string_view::npos) continue;
    if (text[i] == '"') return JsonString(text, i);
    const auto end = text.find_first_not_of("0123456789", i);
    if (end != i) return std::string(text.substr(i, end - i));
  }
  return std::nullopt;
}

std::optional<std::string> FromYaml(std::string_view text, std::string_view key) {
  std::optional<std::string> found;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, key.size()) != key) continue;
    line.remove_prefix(key.size());
    const auto colon = line.find_first_not_of(" \t");
    if (colon == std::string_view::npos || line[colon] != ':') continue;
    line.remove_prefix(colon + 1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    line.remove_prefix(first);
    if (line.front() == '\'' || line.front() == '"') {
      const auto close = line.find(line.front(), 1);
      if (close != std::string_view::npos) found = std::string(line.substr(1, close - 1));
      continue;
    }
    const auto comment = line.find(" #");
    std::string_view value = line.substr(0, comment);
    value.remove_suffix(value.size() - value.find_last_not_of(" \t") - 1);
    found = std::string(value);
  }
  return found;
}

std::optional<std::string> ConfigValue(const std::string& text, std::string_view key) {
  std::string_view view = text;
  const auto first = view.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first != std::string_view::npos && view[first] == '{') return FromJson(view, key);
  return FromYaml(view, key);
}

}  // namespace

std::optional<std::string> ConfigRuntimeEndpoint(const std::string& text) {
  return ConfigValue(text, "containerRuntimeEndpoint");
}

std::optional<std::string> ConfigHealthzPort(const std::string& text) {
  return ConfigValue(text, "healthzPort");
}

}  // namespace dxshim::test::node_standin
