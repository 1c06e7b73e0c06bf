// libFuzzer target: YAML as text to edit in place (shim/install/edit/yaml_text.h), the layer under
// the kubelet config edit. The input is a value (first line) and a document (the rest). Properties:
//   - FormatScalar, in each preferred style, in block and in flow context, gives a scalar that
//     yaml-cpp reads back as the value (valid UTF-8 values); a plain one is a string to YAML (not
//     null, a bool or a number by yaml-cpp's own conversions); single quotes only without control
//     characters;
//   - ParseYaml refuses only with EditError;
//   - the edit of one scalar, in a document of YAML's character set: ScalarSpanOf and
//     NullValueSpan refuse only with EditError; where they give a span, its bytes replaced by
//     FormatScalar(value, the span's style) (after a space when the span is empty, as the kubelet
//     config edit writes it) give a document where, when it parses with as many scalars (the
//     callers parse their result again and refuse any other), that scalar reads the value.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "shim/base/utf8_text.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/yaml_text.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace install = dxshim::install;
using dxshim::fuzz::Check;

constexpr char kNull[] = "\x01(null)";  // a null value in Leaves (ParseYaml refuses NUL bytes)

struct Leaf {
  YAML::Node node;
  bool flow = false;
  bool null_value = false;  // a null value of a mapping entry whose key is `key`
  YAML::Node key;
};

// The scalars and the null values of mapping entries, in document order.
void Collect(const YAML::Node& node, bool flow, int depth, std::vector<Leaf>& leaves) {
  if (depth > 32 || leaves.size() > 200) return;
  flow = flow || ((node.IsMap() || node.IsSequence()) && node.Style() == YAML::EmitterStyle::Flow);
  if (node.IsScalar()) leaves.push_back({node, flow, false, {}});
  if (node.IsSequence()) {
    for (const auto& item : node) Collect(item, flow, depth + 1, leaves);
  }
  if (node.IsMap()) {
    for (const auto& entry : node) {
      Collect(entry.first, flow, depth + 1, leaves);
      if (entry.second.IsNull() && entry.first.IsScalar()) {
        leaves.push_back({entry.second, flow, true, entry.first});
      } else {
        Collect(entry.second, flow, depth + 1, leaves);
      }
    }
  }
}

std::vector<std::string> Values(const std::vector<Leaf>& leaves) {
  std::vector<std::string> values;
  for (const Leaf& leaf : leaves) values.push_back(leaf.null_value ? kNull : leaf.node.Scalar());
  return values;
}

bool ResolvesToNonString(const YAML::Node& scalar) {
  bool flag = false;
  double number = 0;
  return scalar.IsNull() || YAML::convert<bool>::decode(scalar, flag) ||
         YAML::convert<double>::decode(scalar, number);
}

void CheckFormat(const std::string& value) {
  for (const bool flow : {false, true}) {
    for (const auto style : {install::ScalarStyle::kPlain, install::ScalarStyle::kSingleQuoted,
                             install::ScalarStyle::kDoubleQuoted}) {
      const std::string scalar = install::FormatScalar(value, style, flow);
      const std::string doc = flow ? "{k: " + scalar + "}" : "k: " + scalar;
      YAML::Node read;
      try {
        read = YAML::Load(doc)["k"];
      } catch (const YAML::Exception&) {
        Check(false, "a formatted scalar parses");
      }
      Check(read.IsScalar() && read.Scalar() == value, "a formatted scalar reads back");
      if (scalar[0] != '\'' && scalar[0] != '"') {
        Check(!ResolvesToNonString(read), "a plain scalar is a string");
      }
      if (scalar[0] == '\'') {
        for (const char c : value) {
          const auto u = static_cast<unsigned char>(c);
          Check(u >= 0x20 && u != 0x7f, "single quotes carry no control character");
        }
      }
    }
  }
}

// YAML's character set (YAML 1.2, c-printable): valid UTF-8 without C0 controls other than tab and
// line breaks (CRLF or LF), nor DEL, nor U+FEFF. yaml-cpp reads some text outside it, leniently and
// not the same way before and after an edit; the callers' self-checks refuse those edits.
bool Printable(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if ((u < 0x20 && u != '\t' && u != '\r' && u != '\n') || u == 0x7f) return false;
    // A CR alone, which YAML reads as a line break and yaml-cpp as text.
    if (u == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) return false;
  }
  // U+FEFF, which YAML allows in no scalar or name (nb-char excludes it).
  return dxshim::IsValidUtf8(text) && text.find("\xEF\xBB\xBF") == std::string::npos;
}

void CheckEdits(const std::string& text, const std::string& value) {
  if (!Printable(text)) return;
  install::YamlDocument doc;
  try {
    doc = install::ParseYaml(text, "fuzz");
  } catch (const install::EditError&) {
    return;
  }
  if (!doc.root) return;
  std::vector<Leaf> leaves;
  Collect(doc.root, false, 0, leaves);
  const std::vector<std::string> before = Values(leaves);
  for (std::size_t i = 0; i < leaves.size() && i < 8; ++i) {
    const Leaf& leaf = leaves[i];
    install::ScalarSpan span;
    try {
      if (leaf.null_value) {
        span = install::NullValueSpan(doc, {leaf.key, leaf.node}, leaf.flow, "fuzz");
      } else {
        span = install::ScalarSpanOf(doc, leaf.node, leaf.flow, "fuzz");
      }
    } catch (const install::EditError&) {
      continue;
    }
    Check(span.begin <= span.end && span.end <= text.size(), "a span lies in the text");
    std::string replacement = install::FormatScalar(value, span.style, leaf.flow);
    if (span.begin == span.end) replacement = " " + replacement;
    const std::string out = text.substr(0, span.begin) + replacement + text.substr(span.end);
    install::YamlDocument after;
    try {
      after = install::ParseYaml(out, "fuzz");
    } catch (const install::EditError&) {
      // yaml-cpp reads some malformed documents (a plain scalar continued at its key's
      // indentation) but not the same bytes with a quoted key: the callers parse their result
      // again and refuse it.
      continue;
    }
    std::vector<Leaf> now;
    Collect(after.root, false, 0, now);
    // The edited scalar reads the value. That nothing else changed is the callers' self-check
    // (kubelet_config_edit_fuzz holds them to it): yaml-cpp also reads some invalid YAML (a block
    // mapping line without ':'), and not the same way once a neighbour changed.
    if (now.size() == before.size()) {
      Check(Values(now)[i] == value, "the edited scalar reads the value");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = dxshim::fuzz::LeadingLines<1>(data, size);
  if (!input) return 0;
  const auto& [value, text] = *input;
  if (!dxshim::IsValidUtf8(value) || value.find('\0') != std::string::npos) return 0;
  CheckFormat(value);
  CheckFormat(value + "\t\x7f\r\n" + value);
  CheckEdits(text, value);
  return 0;
}
