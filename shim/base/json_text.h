// JSON text, written one way everywhere dxshim writes JSON (inventories, `rewrite`'s crictl
// files, doctor's report, the install record, kubelet's JSON config) and where the same literal
// serves as a YAML double-quoted scalar or a TOML basic string.
#pragma once

#include <string>
#include <string_view>

namespace dxshim {

// `s` as a JSON string literal, quotes included: '"' and '\' escaped, \n \r \t as such, every
// other control character (and DEL) as \u00XX; all else, UTF-8 included, as it is.
std::string JsonString(std::string_view s);

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s);

}  // namespace dxshim
