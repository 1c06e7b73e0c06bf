// The address of the top-level [grpc] table of a containerd config.toml, read line by line.
#include "tests/support/node_standin/containerd_config.h"

#include <cstddef>

#include "devices/windows/wide_text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Narrow;

std::optional<std::string> GrpcAddress(const std::string& toml) {
  bool in_grpc = false;
  std::size_t start = 0;
  while (start < toml.size()) {
    auto end = toml.find('\n', start);
    if (end == std::string::npos) end = toml.size();
    std::string line = toml.substr(start, end - start);
    start = end + 1;
    line.erase(0, line.find_first_not_of(" \t"));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      std::string table = line.substr(0, line.find(']') + 1);
      std::string compact;
      for (const char c : table)
        if (c != ' ' && c != '\t') compact += c;
      in_grpc = compact == "[grpc]";
      continue;
    }
    if (!in_grpc) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    std::string name = line.substr(0, equals);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != "address" && name != "\"address\"" && name != "'address'") continue;
    std::string value = line.substr(equals + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (value.empty()) return std::nullopt;
    if (value[0] == '\'') {
      const auto close = value.find('\'', 1);
      return close == std::string::npos ? std::nullopt : std::optional(value.substr(1, close - 1));
    }
    if (value[0] != '"') return std::nullopt;
    std::string out;
    for (std::size_t i = 1; i < value.size(); ++i) {
      const char c = value[i];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (++i >= value.size()) return std::nullopt;
      switch (value[i]) {
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
        case 'u':
        case 'U': {
          const std::size_t digits = value[i] == 'u' ? 4 : 8;
          if (i + digits >= value.size()) return std::nullopt;
          const std::string hex = value.substr(i + 1, digits);
          if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            return std::nullopt;
          const auto code = std::stoul(hex, nullptr, 16);
          const wchar_t wide = static_cast<wchar_t>(code);  // pipe names: the BMP is plenty
          out += Narrow(&wide, 1);
          i += digits;
          break;
        }
        default:
          out += value[i];
          break;  // \\ and \" (and anything else, leniently)
      }
    }
    return std::nullopt;  // unterminated
  }
  return std::nullopt;
}

}  // namespace dxshim::test::node_standin
