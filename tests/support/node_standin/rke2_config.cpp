// The kubelet-arg items of an rke2 config.yaml, read by a small line reader (not a YAML parser).
#include "tests/support/node_standin/rke2_config.h"

#include <cstddef>
#include <string_view>

namespace dxshim::test::node_standin {

namespace {

// One YAML scalar of a config.yaml line, from `at` (blanks skipped): "double-quoted" (the escapes
// \" \\ \/ \t \n \r), 'single-quoted' ('' a quote) or plain (up to a character of STOPS or a ` #`
// comment, trailing blanks dropped). `at` ends past it.
std::string YamlScalar(const std::string& text, std::size_t& at, const char* stops) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  std::string out;
  if (at < text.size() && text[at] == '"') {
    for (++at; at < text.size() && text[at] != '"'; ++at) {
      if (text[at] != '\\' || at + 1 >= text.size()) {
        out += text[at];
        continue;
      }
      const char escaped = text[++at];
      out += escaped == 't' ? '\t' : escaped == 'n' ? '\n' : escaped == 'r' ? '\r' : escaped;
    }
    ++at;
    return out;
  }
  if (at < text.size() && text[at] == '\'') {
    for (++at; at < text.size(); ++at) {
      if (text[at] == '\'') {
        if (at + 1 < text.size() && text[at + 1] == '\'') {
          out += text[++at];
          continue;
        }
        break;
      }
      out += text[at];
    }
    ++at;
    return out;
  }
  while (at < text.size() && std::string_view(stops).find(text[at]) == std::string_view::npos &&
         !(text[at] == '#' && (out.empty() || out.back() == ' ' || out.back() == '\t'))) {
    out += text[at++];
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return out;
}

}  // namespace

std::vector<std::string> KubeletArgItems(const std::string& yaml) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < yaml.size();) {
    auto end = yaml.find('\n', start);
    if (end == std::string::npos) end = yaml.size();
    std::string line = yaml.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    start = end + 1;
  }
  std::vector<std::string> items;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::size_t at = 0;
    if (lines[i].empty() || lines[i][0] == ' ' || lines[i][0] == '\t') continue;  // not top level
    if (YamlScalar(lines[i], at, ":") != "kubelet-arg" || at >= lines[i].size() ||
        lines[i][at] != ':')
      continue;
    items.clear();  // a repeated key: the last wins
    std::string value = lines[i].substr(at + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (value.empty() || value[0] == '#') {  // a block list on the lines that follow
      for (std::size_t j = i + 1; j < lines.size(); ++j) {
        const auto first = lines[j].find_first_not_of(" \t");
        if (first == std::string::npos || lines[j][first] == '#') continue;
        if (lines[j][first] != '-' || (first + 1 < lines[j].size() && lines[j][first + 1] != ' ' &&
                                       lines[j][first + 1] != '\t'))
          break;
        std::size_t item = first + 1;
        items.push_back(YamlScalar(lines[j], item, ""));
      }
    } else if (value[0] == '[') {  // a flow list, up to its closing bracket
      std::string flow = value;
      for (std::size_t j = i + 1; j < lines.size() && flow.find(']') == std::string::npos; ++j)
        flow += " " + lines[j];
      std::size_t item = 1;
      while (item < flow.size()) {
        while (item < flow.size() && (flow[item] == ' ' || flow[item] == '\t')) ++item;
        if (item >= flow.size() || flow[item] == ']') break;
        items.push_back(YamlScalar(flow, item, ",]"));
        while (item < flow.size() && (flow[item] == ' ' || flow[item] == '\t')) ++item;
        if (item < flow.size() && flow[item] == ',') ++item;
      }
    } else {
      std::size_t item = 0;
      items.push_back(YamlScalar(value, item, ""));
    }
  }
  return items;
}

}  // namespace dxshim::test::node_standin
