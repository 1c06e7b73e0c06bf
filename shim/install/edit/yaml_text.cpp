#include "shim/install/edit/yaml_text.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>
#include <vector>

#include "shim/base/ascii_case.h"
#include "shim/base/json_text.h"
#include "shim/install/edit/command_line.h"

namespace dxshim::install {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsBreak(char c) { return c == '\n' || c == '\r'; }
bool IsControl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

std::string Where(std::string_view kind, std::string_view text, std::size_t offset) {
  return std::string(kind) + " line " + std::to_string(LineAt(text, offset)) + ": ";
}

// A plain scalar that YAML 1.1 or 1.2 (Go's yaml included) resolves to something else than a
// string: null, a bool, a number, an infinity or NaN.
bool ResolvesToNonString(std::string_view value) {
  static constexpr std::array<std::string_view, 11> kWords = {
      "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n", "="};
  const std::string lower = ToLowerAscii(value);
  if (std::find(kWords.begin(), kWords.end(), lower) != kWords.end()) return true;
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (digit(value[0])) return true;
  if (value.size() > 1 && (value[0] == '+' || value[0] == '-' || value[0] == '.') &&
      (digit(value[1]) || value[1] == '.')) {
    return true;
  }
  for (std::string_view special : {".inf", "+.inf", "-.inf", ".nan"}) {
    if (lower == special) return true;
  }
  return false;
}

// U+FEFF as UTF-8: YAML drops it as a byte order mark at the start of a document and allows it in
// no scalar written as it is (YAML 1.2's nb-char excludes it); only a double-quoted \uFEFF carries
// it.
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool PlainCarries(std::string_view value, bool flow) {
  if (value.find(kByteOrderMark) != std::string_view::npos) return false;
  if (value.empty() || IsBlank(value.front()) || IsBlank(value.back())) return false;
  if (std::any_of(value.begin(), value.end(), IsControl)) return false;
  if (std::string_view("?:,[]{}#&*!|>'\"%@`").find(value.front()) != std::string_view::npos) {
    return false;
  }
  if (value.front() == '-' && (value.size() == 1 || IsBlank(value[1]))) return false;
  if (value.back() == ':') return false;
  if (value.find(": ") != std::string_view::npos || value.find(":\t") != std::string_view::npos ||
      value.find(" #") != std::string_view::npos || value.find("\t#") != std::string_view::npos) {
    return false;
  }
  if (flow && value.find_first_of(",[]{}") != std::string_view::npos) return false;
  // yaml-cpp (0.7, 0.8) refuses a '?' inside a plain scalar in a flow collection ("unknown token"),
  // which YAML allows: quoted, it reads back.
  if (flow && value.find('?') != std::string_view::npos) return false;
  return !ResolvesToNonString(value);
}

std::string SingleQuoted(std::string_view value) {
  std::string out = "'";
  for (const char c : value) {
    out += c;
    if (c == '\'') out += '\'';
  }
  out += '\'';
  return out;
}

std::size_t PlainEnd(std::string_view text, std::size_t begin, bool flow) {
  std::size_t i = begin;
  while (i < text.size()) {
    const char c = text[i];
    if (IsBreak(c)) break;
    if (c == '#' && i > begin && IsBlank(text[i - 1])) break;
    if (flow && (c == ',' || c == ']' || c == '}')) break;
    if (c == ':') {
      const bool last = i + 1 == text.size();
      if (last || IsBlank(text[i + 1]) || IsBreak(text[i + 1])) break;
      if (flow && std::string_view(",]}").find(text[i + 1]) != std::string_view::npos) break;
    }
    ++i;
  }
  while (i > begin && IsBlank(text[i - 1])) --i;
  return i;
}

// The events of a document that is only checked for (the parse itself reports the errors).
class IgnoreEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::size_t LineAt(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return static_cast<std::size_t>(
             std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) +
         1;
}

std::string LineEnding(std::string_view text) {
  const std::size_t newline = text.find('\n');
  return newline != std::string_view::npos && newline > 0 && text[newline - 1] == '\r' ? "\r\n"
                                                                                       : "\n";
}

YamlDocument ParseYaml(std::string_view text, std::string_view kind) {
  YamlDocument doc;
  doc.text = text;
  if (text.substr(0, 2) == "\xFF\xFE" || text.substr(0, 2) == "\xFE\xFF" ||
      text.find('\0') != std::string_view::npos) {
    throw EditError(std::string(kind) +
                    " is UTF-16 (or holds NUL bytes); dxshim edits UTF-8 files only");
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") doc.bom = 3;
  // Not YAML::LoadAll: yaml-cpp's LoadAll (0.7, 0.8) never returns on some bad input, making
  // null documents until memory runs out (e.g. "[],": yaml-cpp issue 1040, fixed by its PR 1319).
  // The first document with Load, then whether there is a second, with a bounded parser loop.
  std::size_t documents = 0;
  try {
    const std::string copy(text);
    doc.root = YAML::Load(copy);
    std::istringstream stream(copy);
    YAML::Parser parser(stream);
    IgnoreEvents ignore;
    while (documents < 2 && parser.HandleNextDocument(ignore)) ++documents;
  } catch (const YAML::Exception& error) {
    throw EditError(std::string(kind) + " does not parse as YAML: line " +
                    std::to_string(error.mark.line + 1) + " column " +
                    std::to_string(error.mark.column + 1) + ": " + error.msg);
  }
  if (documents > 1) {
    throw EditError(std::string(kind) +
                    " holds more than one YAML document (or text after its document); dxshim "
                    "edits a file of one document only");
  }
  return doc;
}

std::size_t OffsetOf(const YamlDocument& doc, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.pos < 0) return doc.text.size();
  return std::min(doc.text.size(), static_cast<std::size_t>(mark.pos) + doc.bom);
}

ScalarSpan ScalarSpanOf(const YamlDocument& doc, const YAML::Node& node, bool flow,
                        std::string_view what) {
  const std::string_view text = doc.text;
  const std::size_t begin = OffsetOf(doc, node);
  if (begin >= text.size()) {
    throw EditError(Where(what, text, begin) + "cannot find the value's text");
  }
  ScalarSpan span{begin, begin, ScalarStyle::kPlain};
  const char first = text[begin];
  if (first == '&' || first == '*' || first == '!' || first == '|' || first == '>') {
    throw EditError(Where(what, text, begin) +
                    "the value is an alias, has an anchor or a tag, or is a block scalar; "
                    "dxshim edits plain or quoted scalars only");
  }
  if (first == '"') {
    std::size_t i = begin + 1;
    while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2U : 1U;
    if (i >= text.size()) throw EditError(Where(what, text, begin) + "unterminated string");
    span.end = i + 1;
    span.style = ScalarStyle::kDoubleQuoted;
  } else if (first == '\'') {
    std::size_t i = begin + 1;
    while (i < text.size()) {
      if (text[i] == '\'') {
        if (i + 1 < text.size() && text[i + 1] == '\'') {
          i += 2;
          continue;
        }
        break;
      }
      ++i;
    }
    if (i >= text.size()) throw EditError(Where(what, text, begin) + "unterminated string");
    span.end = i + 1;
    span.style = ScalarStyle::kSingleQuoted;
  } else {
    span.end = PlainEnd(text, begin, flow);
  }
  // The bytes must be the whole value: read them back on their own.
  bool same = false;
  try {
    const YAML::Node alone =
        YAML::Load(std::string(text.substr(span.begin, span.end - span.begin)));
    same = alone.IsScalar() && alone.Scalar() == node.Scalar();
  } catch (const YAML::Exception&) {
    same = false;
  }
  if (!same) {
    throw EditError(Where(what, text, begin) +
                    "the value continues past its first line or could not be delimited; "
                    "dxshim edits one-line scalars only");
  }
  return span;
}

std::string FormatScalar(std::string_view value, ScalarStyle preferred, bool flow) {
  if (preferred == ScalarStyle::kPlain && PlainCarries(value, flow)) return std::string(value);
  if (preferred != ScalarStyle::kDoubleQuoted &&
      std::none_of(value.begin(), value.end(), IsControl) &&
      value.find(kByteOrderMark) == std::string_view::npos) {
    return SingleQuoted(value);
  }
  std::string out = JsonString(value);
  for (auto at = out.find(kByteOrderMark); at != std::string::npos; at = out.find(kByteOrderMark)) {
    out.replace(at, kByteOrderMark.size(), "\\uFEFF");
  }
  return out;
}

std::optional<YamlEntry> FindEntry(const YAML::Node& map, std::string_view key,
                                   std::string_view kind, const YamlDocument& doc) {
  std::optional<YamlEntry> found;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar() || it->first.Scalar() != key) continue;
    if (found) {
      throw EditError(Where(kind, doc.text, OffsetOf(doc, it->first)) + "key \"" +
                      std::string(key) + "\" is there a second time");
    }
    found = YamlEntry{it->first, it->second};
  }
  return found;
}

namespace {

bool IsNullWord(std::string_view word) {
  return word == "~" || word == "null" || word == "Null" || word == "NULL";
}

// The offset of the first byte after `from` that is neither white space, a line break nor part of
// a comment (text.size() at the end). `column` is set to that byte's column when it is the first
// on its line, and to npos otherwise; a tab before it on its line throws (YAML indents with spaces
// only, and dxshim does not guess how a parser counts a tab).
std::size_t NextToken(std::string_view text, std::size_t from, std::size_t& column,
                      std::string_view what) {
  std::size_t i = from;
  bool line_start = false;
  std::size_t line_begin = 0;
  bool tab = false;
  while (i < text.size()) {
    const char c = text[i];
    if (IsBreak(c)) {
      line_start = true;
      line_begin = i + 1;
      tab = false;
    } else if (c == '#' && (i == from || IsBlank(text[i - 1]) || IsBreak(text[i - 1]))) {
      while (i < text.size() && !IsBreak(text[i])) ++i;
      continue;
    } else if (c == '\t') {
      tab = tab || line_start;
    } else if (c != ' ') {
      break;
    }
    ++i;
  }
  column = line_start ? i - line_begin : std::string_view::npos;
  if (tab && i < text.size()) {
    throw EditError(Where(what, text, i) +
                    "a tab indents the value; dxshim does not edit this form");
  }
  return i;
}

}  // namespace

ScalarSpan NullValueSpan(const YamlDocument& doc, const YamlEntry& entry, bool flow,
                         std::string_view what) {
  const std::string_view text = doc.text;
  const ScalarSpan key = ScalarSpanOf(doc, entry.key, flow, what);
  std::size_t i = key.end;
  while (i < text.size() && IsBlank(text[i])) ++i;
  if (i >= text.size() || text[i] != ':') {
    throw EditError(Where(what, text, key.begin) +
                    "the key is not followed by ':' on its line; dxshim does not edit this form");
  }
  ++i;
  // The value may be written on a following line: in block context, indented deeper than its key
  // (`key:` then `  null`); in flow context, anywhere before the next ',' or '}'.
  std::size_t column = 0;
  const std::size_t token = NextToken(text, i, column, what);
  const std::size_t line_begin = text.rfind('\n', key.begin) + 1;  // npos + 1 == 0
  const std::size_t key_column = key.begin - line_begin;
  const bool ends_value =
      token == text.size() || (flow ? (text[token] == ',' || text[token] == '}')
                                    : (column != std::string_view::npos && column <= key_column));
  if (ends_value) return {i, i, ScalarStyle::kPlain};
  const std::size_t token_end = PlainEnd(text, token, flow);
  if (IsNullWord(text.substr(token, token_end - token))) {
    return {token, token_end, ScalarStyle::kPlain};
  }
  throw EditError(Where(what, text, token) + "cannot find where the empty value is");
}

bool SameNode(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar() && a.Tag() == b.Tag();
    case YAML::NodeType::Sequence:
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      auto x = a.begin();
      auto y = b.begin();
      for (; x != a.end() && y != b.end(); ++x, ++y) {
        if (a.IsSequence()) {
          if (!SameNode(*x, *y)) return false;
        } else if (!SameNode(x->first, y->first) || !SameNode(x->second, y->second)) {
          return false;
        }
      }
      return true;
    }
    default:
      return true;
  }
}

}  // namespace dxshim::install
