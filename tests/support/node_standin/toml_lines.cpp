// containerd config.toml read line by line: table headers and `key = value` lines
// (https://toml.io/en/v1.0.0: keys, strings, tables).
#include "tests/support/node_standin/toml_lines.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/support/node_standin/utf8.h"

namespace dxshim::test::node_standin {

namespace {

std::string Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

// A basic string from TEXT[0] == '"': its value and where it ended (past the closing quote).
std::optional<std::string> BasicString(std::string_view text, std::size_t& end) {
  std::string out;
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      end = i + 1;
      return out;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= text.size()) return std::nullopt;
    switch (text[i]) {
      case 'b':
        out += '\b';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'f':
        out += '\f';
        break;
      case 'r':
        out += '\r';
        break;
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case 'u':
      case 'U': {
        const std::size_t digits = text[i] == 'u' ? 4 : 8;
        if (i + digits >= text.size()) return std::nullopt;
        const std::string hex(text.substr(i + 1, digits));
        if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
          return std::nullopt;
        AppendUtf8(out, static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16)));
        i += digits;
        break;
      }
      default:
        return std::nullopt;  // TOML: any other escape is an error
    }
  }
  return std::nullopt;  // unterminated
}

// A key or a header's dotted key, split into its parts with their quotes removed.
std::optional<TomlTable> DottedKey(std::string_view text) {
  TomlTable parts;
  std::size_t i = 0;
  for (;;) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) return std::nullopt;
    std::string part;
    if (text[i] == '"') {
      std::size_t end = 0;
      const auto value = BasicString(text.substr(i), end);
      if (!value) return std::nullopt;
      part = *value;
      i += end;
    } else if (text[i] == '\'') {
      const auto close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      part = std::string(text.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      const auto end = text.find_first_of(". \t", i);
      part = std::string(text.substr(i, end == std::string_view::npos ? end : end - i));
      i = end == std::string_view::npos ? text.size() : end;
      if (part.empty()) return std::nullopt;
    }
    parts.push_back(part);
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) return parts;
    if (text[i] != '.') return std::nullopt;
    ++i;
  }
}

// Calls VISIT(table, line) for every line that is not blank, a comment or a header; headers
// update the table.
template <typename Visit>
void EachLine(const std::string& toml, Visit visit) {
  TomlTable table;
  std::size_t start = 0;
  while (start < toml.size()) {
    auto end = toml.find('\n', start);
    if (end == std::string::npos) end = toml.size();
    const std::string line = Trim(std::string_view(toml).substr(start, end - start));
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      const bool array = line.size() > 1 && line[1] == '[';
      const auto close = line.find(']');
      const auto parts =
          close == std::string::npos
              ? std::nullopt
              : DottedKey(std::string_view(line).substr(array ? 2 : 1, close - (array ? 2 : 1)));
      // An array of tables, or a header not understood, matches no table asked for.
      table = parts && !array ? *parts : TomlTable{"\n"};
      continue;
    }
    visit(table, line);
  }
}

}  // namespace

std::optional<std::string> TomlValue(const std::string& toml, const TomlTable& table,
                                     const std::string& key) {
  std::optional<std::string> found;
  EachLine(toml, [&](const TomlTable& at, const std::string& line) {
    if (at != table) return;
    // The key ends at the first '=' outside quotes.
    bool in_basic = false;
    bool in_literal = false;
    std::size_t equals = std::string::npos;
    for (std::size_t i = 0; i < line.size() && equals == std::string::npos; ++i) {
      if (line[i] == '\\' && in_basic)
        ++i;
      else if (line[i] == '"' && !in_literal)
        in_basic = !in_basic;
      else if (line[i] == '\'' && !in_basic)
        in_literal = !in_literal;
      else if (line[i] == '=' && !in_basic && !in_literal)
        equals = i;
    }
    if (equals == std::string::npos) return;
    const auto name = DottedKey(std::string_view(line).substr(0, equals));
    if (!name || *name != TomlTable{key}) return;
    const std::string value = Trim(std::string_view(line).substr(equals + 1));
    if (value.empty()) return;
    if (value[0] == '"') {
      std::size_t end = 0;
      found = BasicString(value, end);
    } else if (value[0] == '\'') {
      const auto close = value.find('\'', 1);
      found = close == std::string::npos ? std::nullopt : std::optional(value.substr(1, close - 1));
    } else {
      found = value.substr(0, value.find_first_of(" \t#"));
    }
  });
  return found;
}

bool TomlHasTable(const std::string& toml, const TomlTable& table) {
  bool has = false;
  // A header with no key under it still names the table: look at the headers themselves.
  std::size_t start = 0;
  while (start < toml.size() && !has) {
    auto end = toml.find('\n', start);
    if (end == std::string::npos) end = toml.size();
    const std::string line = Trim(std::string_view(toml).substr(start, end - start));
    start = end + 1;
    if (line.size() < 2 || line[0] != '[' || line[1] == '[') continue;
    const auto close = line.find(']');
    if (close == std::string::npos) continue;
    const auto parts = DottedKey(std::string_view(line).substr(1, close - 1));
    has = parts && *parts == table;
  }
  return has;
}

}  // namespace dxshim::test::node_standin
