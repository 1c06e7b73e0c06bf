// The containerd stand-in's container table as text.
#include "tests/support/node_standin/container_table.h"

#include <cstdlib>

namespace dxshim::test::node_standin {

namespace {

constexpr char kFormat[] = "# dxshim node stand-in containers v1";

std::string Escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string Unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[++i];
    out += next == 't' ? '\t' : next == 'n' ? '\n' : next;
  }
  return out;
}

std::uint32_t Number(const std::string& text) {
  return static_cast<std::uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
}

}  // namespace

std::string SerializeContainers(const std::vector<ContainerRecord>& containers) {
  std::string out = std::string(kFormat) + "\n";
  for (const auto& c : containers) {
    out += Escape(c.ns) + "\t" + Escape(c.id) + "\t" + Escape(c.image) + "\t" + Escape(c.runtime) +
           "\t" + Escape(c.task) + "\t" + std::to_string(c.pid) + "\t" +
           std::to_string(c.exit_status) + "\t" + std::to_string(c.shim_pid) + "\t" +
           Escape(c.shim_address) + "\n";
  }
  return out;
}

std::vector<ContainerRecord> ParseContainers(const std::string& text) {
  std::vector<ContainerRecord> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    std::vector<std::string> fields;
    std::size_t from = 0;
    for (;;) {
      const auto tab = line.find('\t', from);
      fields.push_back(line.substr(from, tab == std::string::npos ? tab : tab - from));
      if (tab == std::string::npos) break;
      from = tab + 1;
    }
    if (line.empty() || line[0] == '#' || fields.size() != 9) continue;
    out.push_back(ContainerRecord{Unescape(fields[0]), Unescape(fields[1]), Unescape(fields[2]),
                                  Unescape(fields[3]), Unescape(fields[4]), Number(fields[5]),
                                  Number(fields[6]), Number(fields[7]), Unescape(fields[8])});
  }
  return out;
}

}  // namespace dxshim::test::node_standin
