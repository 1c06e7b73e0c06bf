// Comma lists ("a, b,c"), as dxshim's options, annotations and runtime record write them: split at
// every ',', each item without the spaces and tabs around it. Empty items are kept, so that each
// caller decides what one means (an error in what a person wrote, nothing in what dxshim wrote).
#pragma once

#include <string_view>
#include <vector>

namespace dxshim {

// `text` without the spaces and tabs at either end.
std::string_view TrimBlanks(std::string_view text);
// "a, b,,c" -> {"a", "b", "", "c"}; "" -> {""}. The items point into `text`.
std::vector<std::string_view> SplitCommaList(std::string_view text);

}  // namespace dxshim
