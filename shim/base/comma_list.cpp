#include "shim/base/comma_list.h"

namespace dxshim {

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> SplitCommaList(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    out.push_back(TrimBlanks(text.substr(start, comma - start)));
    if (comma == text.size()) return out;
    start = comma + 1;
  }
}

}  // namespace dxshim
