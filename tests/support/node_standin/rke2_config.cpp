// rke2's configuration, read by a small line reader (not a YAML parser), merged as rke2 does.
#include "tests/support/node_standin/rke2_config.h"

#include <algorithm>
#include <cstddef>
#include <map>
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

std::optional<std::vector<std::string>> ListItems(const std::string& yaml, const std::string& key) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < yaml.size();) {
    auto end = yaml.find('\n', start);
    if (end == std::string::npos) end = yaml.size();
    std::string line = yaml.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    start = end + 1;
  }
  std::optional<std::vector<std::string>> found;
  std::vector<std::string> items;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::size_t at = 0;
    if (lines[i].empty() || lines[i][0] == ' ' || lines[i][0] == '\t') continue;  // not top level
    if (YamlScalar(lines[i], at, ":") != key || at >= lines[i].size() || lines[i][at] != ':')
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
    found = items;
  }
  return found;
}

std::vector<std::string> MergedList(const std::vector<std::string>& files, const std::string& key) {
  std::vector<std::string> merged;
  for (const auto& file : files) {
    if (const auto plain = ListItems(file, key)) merged = *plain;
    if (const auto more = ListItems(file, key + "+")) {
      merged.insert(merged.end(), more->begin(), more->end());
    }
  }
  return merged;
}

std::vector<std::string> KubeletArgs(std::vector<std::pair<std::string, std::string>> initial,
                                     const std::vector<std::string>& items) {
  std::map<std::string, std::vector<std::string>> multi;
  for (std::string item : items) {
    if (item.rfind("--", 0) == 0) item.erase(0, 2);
    const auto eq = item.find('=');
    const std::string arg = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "true" : item.substr(eq + 1);
    std::string name = arg;
    while (!name.empty() && (name.back() == '+' || name.back() == '-')) name.pop_back();
    const auto init = std::find_if(initial.begin(), initial.end(),
                                   [&](const auto& i) { return i.first == name; });
    std::vector<std::string> next;
    const auto& existing = multi[name];
    if (arg.back() == '+') {
      if (init != initial.end()) next.push_back(init->second);
      next.insert(next.end(), existing.begin(), existing.end());
      next.push_back(value);
    } else if (arg.back() == '-') {
      next.push_back(value);
      if (init != initial.end()) next.push_back(init->second);
      next.insert(next.end(), existing.begin(), existing.end());
    } else {
      next = existing;
      next.push_back(value);
    }
    if (init != initial.end()) initial.erase(init);
    multi[name] = next;
  }
  for (const auto& [name, value] : initial) multi[name] = {value};
  std::vector<std::string> args;
  for (const auto& [name, values] : multi) {  // std::map: names sorted
    for (const auto& value : values) args.push_back("--" + name + "=" + value);
  }
  return args;
}

}  // namespace dxshim::test::node_standin
