// YAML (and JSON, which is YAML) as text to edit in place: a document parsed by yaml-cpp with the
// byte offsets of its nodes, the exact bytes of a scalar, a value written as a YAML scalar in a
// given quoting style, and a deep comparison of documents for the edits' self-checks. Shared by
// config_file_edit.h (kubelet's config) and rke2_config.h (rke2's config.yaml).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace dxshim::install {

enum class ScalarStyle { kPlain, kSingleQuoted, kDoubleQuoted };

struct YamlDocument {
  std::string_view text;  // the whole file
  std::size_t bom = 0;    // 3 when it starts with a UTF-8 byte-order mark
  YAML::Node root;        // Null for a file without a document (empty, or comments only)
};

// Parses `text`: at most one document, UTF-8 with or without a byte-order mark. `kind` names the
// file in messages ("kubelet config"). Throws EditError when it does not parse (with the line),
// holds more than one document, or is UTF-16 (yaml-cpp's offsets would not be bytes).
YamlDocument ParseYaml(std::string_view text, std::string_view kind);

// The byte offset in the text of a node's mark.
std::size_t OffsetOf(const YamlDocument& doc, const YAML::Node& node);

// The 1-based line number of a byte offset.
std::size_t LineAt(std::string_view text, std::size_t offset);

// "\r\n" when the text's first line ends so, else "\n".
std::string LineEnding(std::string_view text);

struct ScalarSpan {
  std::size_t begin = 0;  // the scalar's bytes [begin, end), quotes included
  std::size_t end = 0;
  ScalarStyle style = ScalarStyle::kPlain;
};

// The bytes of a scalar node. `flow` is true inside a flow collection ({...} or [...]), where a
// plain scalar also ends at , ] }. Throws EditError (naming `what` and the line) for a block
// scalar (| >), an alias, an anchor or a tag, and when the bytes found do not read back as the
// node's value (a plain scalar continued on the next lines).
ScalarSpan ScalarSpanOf(const YamlDocument& doc, const YAML::Node& node, bool flow,
                        std::string_view what);

// `value` as a YAML scalar in `preferred` style when that style can carry it, else in the next
// (plain -> single-quoted -> double-quoted). Plain only when it reads back as the same string in
// YAML 1.1 and 1.2 (not a bool, number or null, no indicator characters; none of , [ ] { } when
// `flow`, nor a '?', which yaml-cpp cannot read there); single-quoted only without control
// characters. A U+FEFF (which YAML would drop as a byte order mark) is written double-quoted as
// \uFEFF.
std::string FormatScalar(std::string_view value, ScalarStyle preferred, bool flow);

// The top-level entry of a mapping with scalar key `key`; nullopt when absent. Throws EditError
// when the key is there more than once.
struct YamlEntry {
  YAML::Node key;
  YAML::Node value;
};
std::optional<YamlEntry> FindEntry(const YAML::Node& map, std::string_view key,
                                   std::string_view kind, const YamlDocument& doc);

// Where `key`'s value can be written when it is null (`key:` with nothing, `key: ~`,
// `key: null`): the span to replace (empty after the colon when nothing is written there).
ScalarSpan NullValueSpan(const YamlDocument& doc, const YamlEntry& entry, bool flow,
                         std::string_view what);

// Deep equality of two parsed nodes (type, tag, scalar text, items and entries in order).
bool SameNode(const YAML::Node& a, const YAML::Node& b);

}  // namespace dxshim::install
