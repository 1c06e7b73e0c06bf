// YAML text helpers: byte offsets of nodes (past a byte-order mark and multi-byte characters), the
// exact span of plain and quoted scalars, scalars written in a preferred style only when that style
// reads back as the same string, and deep comparison of documents.
#include "shim/install/edit/yaml_text.h"

#include <gtest/gtest.h>

#include <string>

#include "shim/install/edit/command_line.h"

namespace dxshim::install {
namespace {

std::string SpanText(std::string_view text, std::string_view key, bool flow = false) {
  const YamlDocument doc = ParseYaml(text, "test");
  const std::optional<YamlEntry> entry = FindEntry(doc.root, key, "test", doc);
  const ScalarSpan span = ScalarSpanOf(doc, entry->value, flow, "test");
  return std::string(text.substr(span.begin, span.end - span.begin));
}

TEST(NodeYamlText, SpansAreBytesPastBomAndMultiByteCharacters) {
  EXPECT_EQ(SpanText("\xEF\xBB\xBF# gr\xC3\xB6\xC3\x9F"
                     "e \xE2\x9C\x93 \xF0\x9F\x98\x80\na: \"x\\\"y\"  # c\n",
                     "a"),
            "\"x\\\"y\"");
  EXPECT_EQ(SpanText("n: \xC3\xA9t\xC3\xA9\nb: 'it''s' # c\r\n", "b"), "'it''s'");
  EXPECT_EQ(SpanText("b: plain text here   # comment\n", "b"), "plain text here");
  EXPECT_EQ(SpanText("b: a#b\n", "b"), "a#b");
  EXPECT_EQ(SpanText("{\"x\": {\"b\": 1}, \"b\": c, \"d\": 2}", "b", true), "c");
}

TEST(NodeYamlText, FormatScalarKeepsThePreferredStyleWhenItCan) {
  EXPECT_EQ(FormatScalar("npipe://./pipe/x", ScalarStyle::kPlain, false), "npipe://./pipe/x");
  EXPECT_EQ(FormatScalar("a,b", ScalarStyle::kPlain, false), "a,b");
  EXPECT_EQ(FormatScalar("a,b", ScalarStyle::kPlain, true), "'a,b'");
  EXPECT_EQ(FormatScalar("-x", ScalarStyle::kPlain, false), "-x");
  for (const std::string word :
       {"yes", "No", "ON", "null", "~", "",   "12", "-1", ".5",   ".inf", "- x", "#x", "*x",
        "&x",  "!x", "|",  ">",    "'", "\"", "@x", "%x", "a: b", "a #b", "a:",  " a", "a "}) {
    EXPECT_NE(FormatScalar(word, ScalarStyle::kPlain, false), word) << word;
  }
  EXPECT_EQ(FormatScalar("x", ScalarStyle::kSingleQuoted, false), "'x'");
  EXPECT_EQ(FormatScalar("x", ScalarStyle::kDoubleQuoted, false), "\"x\"");
  EXPECT_EQ(FormatScalar("a\tb", ScalarStyle::kSingleQuoted, false), "\"a\\tb\"");
}

TEST(NodeYamlText, FormattedScalarsReadBackUnchanged) {
  for (const std::string value :
       {"plain", "true", "a: b", "it's", "C:\\k\\x", "\\\\.\\pipe\\x", "a\nb", "", " x ", "#",
        "[a]", "{a}", "a,b", "\x7f", "caf\xC3\xA9", "1e3", "0x10", "- ", "? x"}) {
    for (const ScalarStyle style :
         {ScalarStyle::kPlain, ScalarStyle::kSingleQuoted, ScalarStyle::kDoubleQuoted}) {
      for (const bool flow : {false, true}) {
        const std::string scalar = FormatScalar(value, style, flow);
        const std::string text = flow ? "[" + scalar + ", z]" : "k: " + scalar + "\n";
        const YAML::Node node = YAML::Load(text);
        const YAML::Node read = flow ? node[0] : node["k"];
        ASSERT_TRUE(read.IsScalar()) << text;
        EXPECT_EQ(read.Scalar(), value) << text;
        if (scalar == value) {
          EXPECT_EQ(style, ScalarStyle::kPlain) << text;
        }
      }
    }
  }
}

TEST(NodeYamlText, SameNodeComparesDeeply) {
  const YAML::Node a = YAML::Load("a: [1, {b: c}]\nd: e\n");
  EXPECT_TRUE(SameNode(a, YAML::Load("{a: [1, {b: c}], d: e}")));
  EXPECT_FALSE(SameNode(a, YAML::Load("a: [1, {b: x}]\nd: e\n")));
  EXPECT_FALSE(SameNode(a, YAML::Load("a: [1, {b: c}]\nd: 'e'\n")));  // the tag differs
  EXPECT_FALSE(SameNode(a, YAML::Load("a: [1, {b: c}]\n")));
}

// yaml-cpp's LoadAll loops for ever on these (its issue 1040): they must be refused at once.
TEST(NodeYamlText, InputThatHangsYamlCppLoadAllIsRefused) {
  for (const std::string text : {"[],", ",", "a: b\n,\n", "kubelet-arg: [],\n"}) {
    try {
      ParseYaml(text, "test");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const EditError& error) {
      EXPECT_EQ(std::string(error.what()).rfind("test ", 0), 0u) << error.what();
    }
  }
}

TEST(NodeYamlText, LineEndingAndLineAt) {
  EXPECT_EQ(LineEnding("a\r\nb\n"), "\r\n");
  EXPECT_EQ(LineEnding("a\nb\r\n"), "\n");
  EXPECT_EQ(LineEnding("a"), "\n");
  EXPECT_EQ(LineAt("a\nb\nc", 4), 3u);
  EXPECT_EQ(LineAt("a", 0), 1u);
}

// Fuzzing (tests/fuzz/yaml_text_fuzz.cpp): a U+FEFF at the start of a document is read as a byte
// order mark and dropped, and YAML allows it in no scalar written as it is.
TEST(NodeYamlText, FormatScalarEscapesAByteOrderMark) {
  const std::string value = "\xEF\xBB\xBFhealthz-port=0";
  EXPECT_EQ(FormatScalar(value, ScalarStyle::kPlain, false), "\"\\uFEFFhealthz-port=0\"");
  EXPECT_EQ(FormatScalar(value, ScalarStyle::kSingleQuoted, false), "\"\\uFEFFhealthz-port=0\"");
  EXPECT_EQ(
      YAML::Load(FormatScalar(value, ScalarStyle::kPlain, false) + ": x").begin()->first.Scalar(),
      value);
}

// Fuzzing (tests/fuzz/yaml_text_fuzz.cpp): yaml-cpp cannot read `{k: a?b}`.
TEST(NodeYamlText, FormatScalarQuotesAQuestionMarkInFlow) {
  EXPECT_EQ(FormatScalar("a?b:9", ScalarStyle::kPlain, false), "a?b:9");
  EXPECT_EQ(FormatScalar("a?b:9", ScalarStyle::kPlain, true), "'a?b:9'");
  EXPECT_EQ(
      YAML::Load("{k: " + FormatScalar("a?b:9", ScalarStyle::kPlain, true) + "}")["k"].Scalar(),
      "a?b:9");
}

std::string NullSpanText(std::string_view text, std::string_view key, bool flow = false) {
  const YamlDocument doc = ParseYaml(text, "test");
  const std::optional<YamlEntry> entry = FindEntry(doc.root, key, "test", doc);
  const ScalarSpan span = NullValueSpan(doc, *entry, flow, "test");
  return std::to_string(span.begin) + ":" +
         std::string(text.substr(span.begin, span.end - span.begin));
}

// Fuzzing (yaml_text_fuzz, CI): a null written on the line after its key (`m:` then ` null`) was
// taken for an absent value, and the edit wrote the new value after the colon, before the `null`
// that then continued it (`m: v` + ` null` read as "v null").
TEST(NodeYamlText, NullValueSpanFindsANullOnAFollowingLine) {
  EXPECT_EQ(NullSpanText("a: 5\nm:\n null # c\ns: x\n", "m"), "9:null");
  EXPECT_EQ(NullSpanText("m: # c\n\n  # more\n  ~\ns: x\n", "m"), "19:~");
  EXPECT_EQ(NullSpanText("m:\ns: x\n", "m"), "2:");
  EXPECT_EQ(NullSpanText("m:   # c\ns: x\n", "m"), "2:");
  EXPECT_EQ(NullSpanText("m:", "m"), "2:");
  EXPECT_EQ(NullSpanText("m: NULL\n", "m"), "3:NULL");
  EXPECT_EQ(NullSpanText("{m: # c\n  null, s: x}", "m", true), "10:null");
  EXPECT_EQ(NullSpanText("{m:\n , s: x}", "m", true), "3:");
  EXPECT_THROW(NullSpanText("m:\n\t null\n", "m"), EditError);
}

}  // namespace
}  // namespace dxshim::install
