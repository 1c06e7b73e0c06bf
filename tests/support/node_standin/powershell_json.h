// ConvertFrom-Json's reading of JSON text into PowerShell values (portable).
#pragma once

#include <optional>
#include <string>

#include "tests/support/node_standin/powershell_value.h"

namespace dxshim::test::node_standin::powershell {

// JSON TEXT (RFC 8259) as Windows PowerShell 5.1's ConvertFrom-Json gives it: an object is a
// PSCustomObject with its members in order, an array an object[], an integer an Int32 or Int64,
// a fraction a number, true/false/null $true/$false/$null. Nothing, with ERROR saying where and
// why, for text that is not JSON.
std::optional<Value> ParseJson(const std::string& text, std::string& error);

// VALUE as Windows PowerShell 5.1's ConvertTo-Json writes it: four spaces of indentation per
// level, `"name":  value` (two spaces), CRLF between lines; a hashtable's or object's members in
// order; below DEPTH levels an object is its ToString() text.
std::string WriteJson(const Value& value, int depth);

}  // namespace dxshim::test::node_standin::powershell
