// Comma lists ("a, b,c"), as dxshim's options, annotations and runtime record write them: split at
// every ',', each item without the spaces and tabs around it. Empty items are kept, so that each
// caller decides what one means (an error in what a person wrote, nothing in what dxshim wrote).
// And the other way: JoinCommaList writes a list that SplitCommaList reads back item for item
// (when no item holds a ',' or starts or ends with a blank), JoinList a list for people to read.
#pragma once

#include <functional>
#include <ranges>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim {

// `text` without the spaces and tabs at either end.
std::string_view TrimBlanks(std::string_view text);
// "a, b,,c" -> {"a", "b", "", "c"}; "" -> {""}. The items point into `text`.
std::vector<std::string_view> SplitCommaList(std::string_view text);

// `item(x)` of each x of `items`, with `separator` between two: {"a", "b"} -> "a, b" for ", ".
template <std::ranges::input_range Items, typename Item = std::identity>
std::string JoinList(const Items& items, std::string_view separator, Item item = {}) {
  std::string out;
  bool first = true;
  for (const auto& x : items) {
    if (!first) out += separator;
    first = false;
    out += std::invoke(item, x);
  }
  return out;
}

// {"a", "b"} -> "a,b": the form dxshim writes for a list that is read back (the Allocate answer's
// environment, container labels, node labels, injected environment variables).
template <std::ranges::input_range Items, typename Item = std::identity>
std::string JoinCommaList(const Items& items, Item item = {}) {
  return JoinList(items, ",", item);
}

}  // namespace dxshim
