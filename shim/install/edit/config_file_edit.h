// kubelet's config file (a KubeletConfiguration, YAML or JSON: kubelet accepts both) and the
// drop-ins of its --config-dir: reads and sets one TOP-LEVEL key with a scalar string value (say
// containerRuntimeEndpoint), changing only the bytes of that value, and re-reading the result to
// prove that nothing else changed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dxshim::install {

enum class ConfigSyntax { kYaml, kJson };

// JSON when the first character that is not whitespace or a byte-order mark is '{'.
ConfigSyntax DetectSyntax(std::string_view text);

// The top-level key's scalar value (YAML plain, single- or double-quoted; a JSON string or other
// scalar as written), nullopt when absent or null (`key:`, `key: ~`, `"key": null`). Throws
// EditError when the text does not parse (yaml-cpp reads both: JSON is YAML), is not a mapping,
// holds the key twice, or the value is not a scalar.
std::optional<std::string> ReadTopLevelString(std::string_view text, std::string_view key);

// The text with the top-level key set to `value`. Present: only the value's bytes change (its
// quoting style kept when it can carry the value; quoted when the value needs it; JSON: a JSON
// string); unchanged when it already reads `value`. Absent: YAML -> a line `key: value` appended
// (with the file's own line ending, at the indentation of the other top-level keys; a missing
// final newline is added before it); JSON -> `"key": "value",` inserted as the first member with
// the whitespace that precedes the existing first member (or `{"key": "value"}` for an empty
// object). A byte-order mark is kept, never added. After editing, the result is parsed again and
// must read `value` for the key with every other top-level key unchanged, else EditError: the edit
// never silently corrupts a file. Flow-style YAML documents, multi-document files, non-mapping
// documents, block scalars, anchors, aliases and tags on the value: EditError.
std::string SetTopLevelString(std::string_view text, std::string_view key, std::string_view value);

}  // namespace dxshim::install
