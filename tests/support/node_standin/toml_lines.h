// A small TOML reader for containerd's config.toml, line by line (not shared with dxshim's own
// reader, shim/install/edit/containerd_config.cpp): a [table] header's dotted key parts, unquoted,
// and the scalar value of a `key = value` line in it. Dotted keys inside a table, inline tables,
// arrays and multi-line strings are not read.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin {

// TABLE: the header's dotted key parts ({} the top level, before any header).
using TomlTable = std::vector<std::string>;

// The value of KEY in TABLE: a basic "..." string with its escapes decoded, a literal '...'
// string as it is, or any other value's text up to a blank or a comment (an integer, a boolean).
// Nothing when the key is absent or its string is malformed; the last one wins.
std::optional<std::string> TomlValue(const std::string& toml, const TomlTable& table,
                                     const std::string& key);

// Whether TOML has a [table] header naming TABLE.
bool TomlHasTable(const std::string& toml, const TomlTable& table);

}  // namespace dxshim::test::node_standin
