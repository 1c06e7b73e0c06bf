#include "shim/install/edit/config_file_edit.h"

#include "shim/base/json_text.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/yaml_text.h"

namespace dxshim::install {
namespace {

std::string Kind(ConfigSyntax syntax) {
  return syntax == ConfigSyntax::kJson ? "kubelet config (JSON)" : "kubelet config (YAML)";
}

std::string Quoted(std::string_view key) { return "\"" + std::string(key) + "\""; }

// The whitespace before the first top-level key on its line ("" when the key is not first on it).
std::string IndentOf(const YamlDocument& doc, std::size_t offset) {
  const std::string_view text = doc.text;
  std::size_t line_start = doc.bom;
  if (offset > 0) {
    const std::size_t newline = text.rfind('\n', offset - 1);
    if (newline != std::string_view::npos) line_start = newline + 1;
  }
  if (line_start > offset) return "";
  const std::string_view indent = text.substr(line_start, offset - line_start);
  return indent.find_first_not_of(' ') == std::string_view::npos ? std::string(indent) : "";
}

std::string InsertAbsent(const YamlDocument& doc, ConfigSyntax syntax, std::string_view key,
                         std::string_view value) {
  const std::string_view text = doc.text;
  std::string out(text);
  if (syntax == ConfigSyntax::kYaml) {
    std::string indent;
    if (doc.root.IsMap() && doc.root.size() > 0) {
      indent = IndentOf(doc, OffsetOf(doc, doc.root.begin()->first));
    }
    const std::string eol = LineEnding(text);
    if (out.size() > doc.bom && out.back() != '\n') out += eol;
    out += indent + FormatScalar(key, ScalarStyle::kPlain, false) + ": " +
           FormatScalar(value, ScalarStyle::kPlain, false) + eol;
    return out;
  }
  const std::size_t brace = OffsetOf(doc, doc.root);
  if (brace >= text.size() || text[brace] != '{') {
    throw EditError(Kind(syntax) + ": cannot find the '{' that opens the document");
  }
  const std::string member = JsonString(key) + ": " + JsonString(value);
  if (doc.root.size() == 0) {
    const std::size_t close = text.find_first_not_of(" \t\r\n", brace + 1);
    if (close == std::string_view::npos || text[close] != '}') {
      throw EditError(Kind(syntax) + " line " + std::to_string(LineAt(text, brace)) +
                      ": cannot find the '}' of the empty object");
    }
    // Right after the '{': the whitespace inside the empty object stays as it was.
    return out.insert(brace + 1, member);
  }
  const std::size_t first = OffsetOf(doc, doc.root.begin()->first);
  const std::string_view before = text.substr(brace + 1, first - (brace + 1));
  if (before.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    throw EditError(Kind(syntax) + " line " + std::to_string(LineAt(text, first)) +
                    ": something else than whitespace before the first member");
  }
  return out.insert(first, member + "," + std::string(before));
}

}  // namespace

ConfigSyntax DetectSyntax(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{' ? ConfigSyntax::kJson
                                                               : ConfigSyntax::kYaml;
}

std::optional<std::string> ReadTopLevelString(std::string_view text, std::string_view key) {
  const std::string kind = Kind(DetectSyntax(text));
  const YamlDocument doc = ParseYaml(text, kind);
  if (!doc.root || doc.root.IsNull()) return std::nullopt;
  if (!doc.root.IsMap()) throw EditError(kind + " is not a mapping of keys to values");
  const std::optional<YamlEntry> entry = FindEntry(doc.root, key, kind, doc);
  if (!entry || entry->value.IsNull()) return std::nullopt;
  if (!entry->value.IsScalar()) {
    throw EditError(kind + " line " + std::to_string(LineAt(text, OffsetOf(doc, entry->key))) +
                    ": " + Quoted(key) + " is not a string");
  }
  return entry->value.Scalar();
}

std::string SetTopLevelString(std::string_view text, std::string_view key, std::string_view value) {
  const ConfigSyntax syntax = DetectSyntax(text);
  const std::string kind = Kind(syntax);
  const YamlDocument doc = ParseYaml(text, kind);
  const bool empty = !doc.root || doc.root.IsNull();
  if (!empty && !doc.root.IsMap()) throw EditError(kind + " is not a mapping of keys to values");
  if (!empty && syntax == ConfigSyntax::kYaml && doc.root.Style() == YAML::EmitterStyle::Flow) {
    throw EditError(kind +
                    " is a flow-style document ({...} after other text); dxshim edits "
                    "block-style YAML or JSON only");
  }
  const bool flow = syntax == ConfigSyntax::kJson;
  const std::string what = kind + " key " + Quoted(key);
  std::optional<YamlEntry> entry;
  if (!empty) entry = FindEntry(doc.root, key, kind, doc);
  std::string out;
  if (!entry) {
    out = InsertAbsent(doc, syntax, key, value);
  } else {
    ScalarSpan span;
    if (entry->value.IsNull()) {
      span = NullValueSpan(doc, *entry, flow, what);
    } else if (entry->value.IsScalar()) {
      if (entry->value.Scalar() == value) return std::string(text);
      span = ScalarSpanOf(doc, entry->value, flow, what);
    } else {
      throw EditError(what + " (line " + std::to_string(LineAt(text, OffsetOf(doc, entry->key))) +
                      ") is not a string but a list or a mapping");
    }
    std::string replacement =
        syntax == ConfigSyntax::kJson ? JsonString(value) : FormatScalar(value, span.style, false);
    if (span.begin == span.end) replacement = " " + replacement;  // after `key:`
    out =
        std::string(text.substr(0, span.begin)) + replacement + std::string(text.substr(span.end));
  }

  // The self-check: the key reads `value`, everything else reads as before.
  const std::string failed = kind + ": setting " + Quoted(key) + " would ";
  YamlDocument after;
  try {
    after = ParseYaml(out, kind);
  } catch (const EditError& error) {
    throw EditError(failed + "break the file (" + error.what() + "); not written");
  }
  if (!after.root.IsMap()) throw EditError(failed + "not leave a mapping; not written");
  const std::optional<YamlEntry> now = FindEntry(after.root, key, kind, after);
  if (!now || !now->value.IsScalar() || now->value.Scalar() != value) {
    throw EditError(failed + "not read back as the value set; not written");
  }
  const std::size_t before_count = empty ? 0 : doc.root.size();
  if (after.root.size() != before_count + (entry ? 0 : 1)) {
    throw EditError(failed + "change the number of top-level keys; not written");
  }
  if (!empty) {
    for (auto it = doc.root.begin(); it != doc.root.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) continue;
      bool same = false;
      for (auto jt = after.root.begin(); jt != after.root.end(); ++jt) {
        if (SameNode(it->first, jt->first)) {
          same = SameNode(it->second, jt->second);
          break;
        }
      }
      if (!same) {
        throw EditError(failed + "change the top-level key " +
                        (it->first.IsScalar() ? Quoted(it->first.Scalar()) : "(complex key)") +
                        "; not written");
      }
    }
  }
  if (DetectSyntax(out) != syntax) throw EditError(failed + "change its syntax; not written");
  return out;
}

}  // namespace dxshim::install
