#include "shim/node/rke2_config.h"

#include <vector>

#include "shim/node/command_line.h"
#include "shim/node/yaml_text.h"

namespace dxshim::node {
namespace {

constexpr std::string_view kKind = "rke2 config.yaml";
constexpr std::string_view kKey = "kubelet-arg";

struct Arg {
  std::string prefix;  // "--" when the item has it
  std::string name;
  std::string value;  // "true" for an item without '='
  bool has_value = false;
};

Arg ParseArg(std::string_view item) {
  Arg arg;
  if (item.substr(0, 2) == "--") {
    arg.prefix = "--";
    item.remove_prefix(2);
  }
  const std::size_t eq = item.find('=');
  arg.name = std::string(item.substr(0, eq));
  arg.has_value = eq != std::string_view::npos;
  arg.value = arg.has_value ? std::string(item.substr(eq + 1)) : "true";
  return arg;
}

bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if ((a[i] == '_' ? '-' : a[i]) != (b[i] == '_' ? '-' : b[i])) return false;
  }
  return true;
}

std::string Where(std::string_view text, std::size_t offset) {
  return std::string(kKind) + " line " + std::to_string(LineAt(text, offset)) + ": ";
}

// The items of kubelet-arg (a string or a list of strings); empty for null.
std::vector<YAML::Node> Items(const YamlDocument& doc, const YAML::Node& value) {
  std::vector<YAML::Node> items;
  if (value.IsNull()) return items;
  if (value.IsScalar()) return {value};
  if (!value.IsSequence()) {
    throw EditError(Where(doc.text, OffsetOf(doc, value)) + std::string(kKey) +
                    " is a mapping, not a list of name=value strings");
  }
  for (const YAML::Node& item : value) {
    if (!item.IsScalar()) {
      throw EditError(Where(doc.text, OffsetOf(doc, item)) + "an item of " + std::string(kKey) +
                      " is not a string");
    }
    items.push_back(item);
  }
  return items;
}

std::optional<YamlEntry> Entry(const YamlDocument& doc) {
  if (!doc.root || doc.root.IsNull()) return std::nullopt;
  if (!doc.root.IsMap())
    throw EditError(std::string(kKind) + " is not a mapping of keys to values");
  return FindEntry(doc.root, kKey, kKind, doc);
}

// The item strings whose name is not `name`, in order.
std::vector<std::string> Others(const YamlDocument& doc, std::string_view name) {
  std::vector<std::string> others;
  const std::optional<YamlEntry> entry = Entry(doc);
  if (!entry) return others;
  for (const YAML::Node& item : Items(doc, entry->value)) {
    if (!SameName(ParseArg(item.Scalar()).name, name)) others.push_back(item.Scalar());
  }
  return others;
}

std::string Splice(std::string_view text, std::size_t begin, std::size_t end,
                   std::string_view replacement) {
  std::string out(text.substr(0, begin));
  out += replacement;
  out.append(text.substr(end));
  return out;
}

std::string Append(const YamlDocument& doc, const YAML::Node& list, std::string_view item) {
  const std::string_view text = doc.text;
  const bool flow = list.Style() == YAML::EmitterStyle::Flow;
  const std::string what = std::string(kKind) + " " + std::string(kKey);
  std::vector<YAML::Node> items(list.begin(), list.end());
  if (flow) {
    if (items.empty()) {
      const std::size_t open = OffsetOf(doc, list);
      const std::size_t close = text.find_first_not_of(" \t\r\n", open + 1);
      if (text.substr(open, 1) != "[" || close == std::string_view::npos || text[close] != ']') {
        throw EditError(Where(text, open) + "cannot find the brackets of the empty " +
                        std::string(kKey) + " list");
      }
      return Splice(text, open, close + 1,
                    "[" + FormatScalar(item, ScalarStyle::kDoubleQuoted, true) + "]");
    }
    const ScalarSpan last = ScalarSpanOf(doc, items.back(), true, what);
    std::string separator = ", ";
    if (items.size() >= 2) {
      const ScalarSpan before = ScalarSpanOf(doc, items[items.size() - 2], true, what);
      const std::string_view between = text.substr(before.end, last.begin - before.end);
      if (between.find(',') != std::string_view::npos &&
          between.find_first_not_of(", \t\r\n") == std::string_view::npos) {
        separator = std::string(between);
      }
    }
    return Splice(text, last.end, last.end, separator + FormatScalar(item, last.style, true));
  }
  const ScalarSpan last = ScalarSpanOf(doc, items.back(), false, what);
  std::size_t line_start = last.begin;
  while (line_start > doc.bom && text[line_start - 1] != '\n') --line_start;
  const std::string_view prefix = text.substr(line_start, last.begin - line_start);
  const std::size_t dash = prefix.find_first_not_of(' ');
  if (dash == std::string_view::npos || prefix[dash] != '-' || dash + 1 >= prefix.size() ||
      prefix.find_first_not_of(" \t", dash + 1) != std::string_view::npos) {
    throw EditError(Where(text, last.begin) + "the last item of " + std::string(kKey) +
                    " is not on a line `- item` of its own; dxshim does not edit this form");
  }
  const std::string line = std::string(prefix) + FormatScalar(item, last.style, false);
  const std::string eol = LineEnding(text);
  const std::size_t newline = text.find('\n', last.end);
  if (newline == std::string_view::npos) return std::string(text) + eol + line;
  return Splice(text, newline + 1, newline + 1, line + eol);
}

}  // namespace

std::optional<std::string> ReadRke2KubeletArg(std::string_view text, std::string_view name) {
  const YamlDocument doc = ParseYaml(text, kKind);
  const std::optional<YamlEntry> entry = Entry(doc);
  if (!entry) return std::nullopt;
  std::optional<std::string> found;
  for (const YAML::Node& item : Items(doc, entry->value)) {
    Arg arg = ParseArg(item.Scalar());
    if (SameName(arg.name, name)) found = std::move(arg.value);
  }
  return found;
}

std::string SetRke2KubeletArg(std::string_view text, std::string_view name,
                              std::string_view value) {
  if (name.empty() || name.substr(0, 1) == "-" ||
      name.find_first_of("= \t\r\n") != std::string_view::npos) {
    throw EditError(std::string(kKind) + ": \"" + std::string(name) +
                    "\" is not a kubelet flag name (give it without dashes)");
  }
  const YamlDocument doc = ParseYaml(text, kKind);
  if (doc.root && doc.root.IsMap() && doc.root.Style() == YAML::EmitterStyle::Flow) {
    throw EditError(std::string(kKind) +
                    " is a flow-style document ({...}); dxshim edits block-style YAML only");
  }
  const std::optional<YamlEntry> entry = Entry(doc);
  const std::string what = std::string(kKind) + " " + std::string(kKey);
  const std::string new_item = std::string(name) + "=" + std::string(value);
  std::string out;
  if (!entry) {
    std::string indent;
    if (doc.root && doc.root.IsMap() && doc.root.size() > 0) {
      const std::size_t first = OffsetOf(doc, doc.root.begin()->first);
      std::size_t line_start = first;
      while (line_start > doc.bom && text[line_start - 1] != '\n') --line_start;
      indent = std::string(text.substr(line_start, first - line_start));
      if (indent.find_first_not_of(' ') != std::string::npos) indent.clear();
    }
    const std::string eol = LineEnding(text);
    out = std::string(text);
    if (out.size() > doc.bom && out.back() != '\n') out += eol;
    out += indent + std::string(kKey) + ":" + eol + indent + "  - " +
           FormatScalar(new_item, ScalarStyle::kDoubleQuoted, false) + eol;
  } else if (entry->value.IsNull()) {
    const ScalarSpan span = NullValueSpan(doc, *entry, false, what);
    std::string list = "[" + FormatScalar(new_item, ScalarStyle::kDoubleQuoted, true) + "]";
    if (span.begin == span.end) list = " " + list;
    out = Splice(text, span.begin, span.end, list);
  } else {
    const std::vector<YAML::Node> items = Items(doc, entry->value);
    const bool flow = entry->value.IsSequence() && entry->value.Style() == YAML::EmitterStyle::Flow;
    bool matched = false;
    std::vector<std::pair<ScalarSpan, std::string>> replacements;
    for (const YAML::Node& item : items) {
      const Arg arg = ParseArg(item.Scalar());
      if (!SameName(arg.name, name)) continue;
      matched = true;
      if (arg.value == value) continue;  // an item without `=` is "true"
      const ScalarSpan span = ScalarSpanOf(doc, item, flow, what);
      replacements.emplace_back(
          span, FormatScalar(arg.prefix + arg.name + "=" + std::string(value), span.style, flow));
    }
    if (matched) {
      if (replacements.empty()) return std::string(text);
      out = std::string(text);
      for (auto it = replacements.rbegin(); it != replacements.rend(); ++it) {
        out = Splice(out, it->first.begin, it->first.end, it->second);
      }
    } else if (entry->value.IsScalar()) {
      const ScalarSpan span = ScalarSpanOf(doc, entry->value, false, what);
      const std::string existing = FormatScalar(entry->value.Scalar(), span.style, true);
      const ScalarStyle style =
          span.style == ScalarStyle::kPlain ? ScalarStyle::kDoubleQuoted : span.style;
      out = Splice(text, span.begin, span.end,
                   "[" + existing + ", " + FormatScalar(new_item, style, true) + "]");
    } else {
      out = Append(doc, entry->value, new_item);
    }
  }

  // The self-check: the arg reads `value`, the other items and keys read as before.
  const std::string failed =
      std::string(kKind) + ": setting kubelet arg " + std::string(name) + " would ";
  YamlDocument after;
  try {
    after = ParseYaml(out, kKind);
  } catch (const EditError& error) {
    throw EditError(failed + "break the file (" + error.what() + "); not written");
  }
  if (ReadRke2KubeletArg(out, name) != std::optional<std::string>(value)) {
    throw EditError(failed + "not read back as the value set; not written");
  }
  if (Others(after, name) != Others(doc, name)) {
    throw EditError(failed + "change its other kubelet args; not written");
  }
  const std::size_t before_count = doc.root && doc.root.IsMap() ? doc.root.size() : 0;
  if (!after.root.IsMap() || after.root.size() != before_count + (entry ? 0 : 1)) {
    throw EditError(failed + "change the number of top-level keys; not written");
  }
  if (before_count > 0) {
    for (auto it = doc.root.begin(); it != doc.root.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == kKey) continue;
      bool same = false;
      for (auto jt = after.root.begin(); jt != after.root.end(); ++jt) {
        if (SameNode(it->first, jt->first)) {
          same = SameNode(it->second, jt->second);
          break;
        }
      }
      if (!same) throw EditError(failed + "change another top-level key; not written");
    }
  }
  return out;
}

}  // namespace dxshim::node
