// kubelet's config file, YAML (CRLF, comments, quoted values, null values, a byte-order mark) and
// JSON (compact, pretty, empty), has one top-level key read and set by changing only its value's
// bytes or adding one line or member; nested keys of the same name are left alone; the edits are
// idempotent and self-checked; what they cannot edit safely is refused with the reason.
#include "shim/install/edit/config_file_edit.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "shim/install/edit/command_line.h"
#include "tests/install/edit_errors.h"

namespace dxshim::install {
namespace {

using test::ErrorOf;
using test::Has;

constexpr std::string_view kKey = "containerRuntimeEndpoint";
constexpr std::string_view kDxshim = "npipe://./pipe/dxshim";

std::string Set(std::string_view text, std::string_view value = kDxshim) {
  const std::string out = SetTopLevelString(text, kKey, value);
  EXPECT_EQ(SetTopLevelString(out, kKey, value), out) << "not idempotent";
  EXPECT_EQ(ReadTopLevelString(out, kKey), std::optional<std::string>(value));
  return out;
}

TEST(NodeConfigFile, DetectsTheSyntax) {
  EXPECT_EQ(DetectSyntax("{\"kind\": \"KubeletConfiguration\"}"), ConfigSyntax::kJson);
  EXPECT_EQ(DetectSyntax("\xEF\xBB\xBF \r\n  {}"), ConfigSyntax::kJson);
  EXPECT_EQ(DetectSyntax("kind: KubeletConfiguration\n"), ConfigSyntax::kYaml);
  EXPECT_EQ(DetectSyntax(""), ConfigSyntax::kYaml);
}

const std::string kYamlCrlf =
    "apiVersion: kubelet.config.k8s.io/v1beta1\r\n"
    "kind: KubeletConfiguration\r\n"
    "# where kubelet finds the runtime\r\n"
    "containerRuntimeEndpoint: npipe://./pipe/containerd-containerd  # the default\r\n"
    "authentication:\r\n"
    "  anonymous:\r\n"
    "    enabled: false\r\n"
    "cgroupDriver: cgroupfs\r\n";

TEST(NodeConfigFile, YamlWithCrlfAndCommentsChangesOnlyTheValue) {
  EXPECT_EQ(ReadTopLevelString(kYamlCrlf, kKey), "npipe://./pipe/containerd-containerd");
  EXPECT_EQ(ReadTopLevelString(kYamlCrlf, "cgroupDriver"), "cgroupfs");
  EXPECT_EQ(Set(kYamlCrlf),
            "apiVersion: kubelet.config.k8s.io/v1beta1\r\n"
            "kind: KubeletConfiguration\r\n"
            "# where kubelet finds the runtime\r\n"
            "containerRuntimeEndpoint: npipe://./pipe/dxshim  # the default\r\n"
            "authentication:\r\n"
            "  anonymous:\r\n"
            "    enabled: false\r\n"
            "cgroupDriver: cgroupfs\r\n");
  EXPECT_EQ(SetTopLevelString(kYamlCrlf, kKey, "npipe://./pipe/containerd-containerd"), kYamlCrlf);
}

TEST(NodeConfigFile, YamlQuotedValuesKeepTheirQuotes) {
  EXPECT_EQ(Set("kind: KubeletConfiguration\ncontainerRuntimeEndpoint: \"npipe://./pipe/x\"\n"),
            "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: \"npipe://./pipe/dxshim\"\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: 'npipe://./pipe/x' # c\nkind: K\n"),
            "containerRuntimeEndpoint: 'npipe://./pipe/dxshim' # c\nkind: K\n");
  EXPECT_EQ(Set("\"containerRuntimeEndpoint\" : \"x\"\n"),
            "\"containerRuntimeEndpoint\" : \"npipe://./pipe/dxshim\"\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: \"x\"\n", R"(\\.\pipe\dxshim)"),
            R"(containerRuntimeEndpoint: "\\\\.\\pipe\\dxshim")"
            "\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: 'x'\n", "it's"), "containerRuntimeEndpoint: 'it''s'\n");
}

TEST(NodeConfigFile, YamlValuesThatNeedQuotesGetThem) {
  EXPECT_EQ(Set("containerRuntimeEndpoint: x\n", "true"), "containerRuntimeEndpoint: 'true'\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: x\n", "a: b #c"),
            "containerRuntimeEndpoint: 'a: b #c'\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: x\n", ""), "containerRuntimeEndpoint: ''\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: x\n", "a\nb"), "containerRuntimeEndpoint: \"a\\nb\"\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: x\n", "1.5"), "containerRuntimeEndpoint: '1.5'\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: x\n", R"(C:\k\x)"),
            "containerRuntimeEndpoint: C:\\k\\x\n");
}

TEST(NodeConfigFile, YamlNullValues) {
  EXPECT_FALSE(ReadTopLevelString("containerRuntimeEndpoint:\nkind: K\n", kKey));
  EXPECT_EQ(Set("containerRuntimeEndpoint:\nkind: K\n"),
            "containerRuntimeEndpoint: npipe://./pipe/dxshim\nkind: K\n");
  EXPECT_EQ(Set("containerRuntimeEndpoint: ~ # unset\r\nkind: K\r\n"),
            "containerRuntimeEndpoint: npipe://./pipe/dxshim # unset\r\nkind: K\r\n");
  EXPECT_EQ(Set("kind: K\ncontainerRuntimeEndpoint:   # later\n"),
            "kind: K\ncontainerRuntimeEndpoint: npipe://./pipe/dxshim   # later\n");
}

TEST(NodeConfigFile, YamlAbsentKeyIsAppendedWithTheFilesLineEnding) {
  EXPECT_EQ(Set("kind: KubeletConfiguration\r\ncgroupDriver: cgroupfs\r\n"),
            "kind: KubeletConfiguration\r\ncgroupDriver: cgroupfs\r\n"
            "containerRuntimeEndpoint: npipe://./pipe/dxshim\r\n");
  EXPECT_EQ(Set("kind: KubeletConfiguration\r\ncgroupDriver: cgroupfs"),
            "kind: KubeletConfiguration\r\ncgroupDriver: cgroupfs\r\n"
            "containerRuntimeEndpoint: npipe://./pipe/dxshim\r\n");
  EXPECT_EQ(Set("kind: K\nauthentication:\n  x: 1\n# trailing comment\n"),
            "kind: K\nauthentication:\n  x: 1\n# trailing comment\n"
            "containerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(Set(""), "containerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(Set("# nothing yet\n"),
            "# nothing yet\ncontainerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(Set("---\nkind: K\n"),
            "---\nkind: K\ncontainerRuntimeEndpoint: npipe://./pipe/dxshim\n");
}

TEST(NodeConfigFile, AByteOrderMarkIsKeptNeverAdded) {
  EXPECT_EQ(Set("\xEF\xBB\xBFkind: K\ncontainerRuntimeEndpoint: x\n"),
            "\xEF\xBB\xBFkind: K\ncontainerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(Set("\xEF\xBB\xBFkind: K"),
            "\xEF\xBB\xBFkind: K\ncontainerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  EXPECT_EQ(
      Set("\xEF\xBB\xBF{\"kind\": \"K\"}"),
      "\xEF\xBB\xBF{\"containerRuntimeEndpoint\": \"npipe://./pipe/dxshim\",\"kind\": \"K\"}");
  EXPECT_EQ(Set("kind: K\n").substr(0, 4), "kind");
}

TEST(NodeConfigFile, NestedKeysOfTheSameNameAreNotTouched) {
  const std::string yaml = "kind: K\nnested:\n  containerRuntimeEndpoint: keep\n";
  EXPECT_FALSE(ReadTopLevelString(yaml, kKey));
  EXPECT_EQ(Set(yaml), yaml + "containerRuntimeEndpoint: npipe://./pipe/dxshim\n");
  const std::string json =
      "{\n"
      "  \"kind\": \"KubeletConfiguration\",\n"
      "  \"authentication\": {\n"
      "    \"containerRuntimeEndpoint\": \"keep\"\n"
      "  }\n"
      "}\n";
  EXPECT_FALSE(ReadTopLevelString(json, kKey));
  EXPECT_EQ(Set(json),
            "{\n"
            "  \"containerRuntimeEndpoint\": \"npipe://./pipe/dxshim\",\n"
            "  \"kind\": \"KubeletConfiguration\",\n"
            "  \"authentication\": {\n"
            "    \"containerRuntimeEndpoint\": \"keep\"\n"
            "  }\n"
            "}\n");
}

TEST(NodeConfigFile, JsonCompact) {
  const std::string json =
      R"({"kind":"KubeletConfiguration","containerRuntimeEndpoint":"npipe://./pipe/containerd-containerd","x":{"containerRuntimeEndpoint":"n"}})";
  EXPECT_EQ(ReadTopLevelString(json, kKey), "npipe://./pipe/containerd-containerd");
  EXPECT_EQ(
      Set(json),
      R"({"kind":"KubeletConfiguration","containerRuntimeEndpoint":"npipe://./pipe/dxshim","x":{"containerRuntimeEndpoint":"n"}})");
  EXPECT_EQ(
      Set(R"({"kind":"KubeletConfiguration"})"),
      R"({"containerRuntimeEndpoint": "npipe://./pipe/dxshim","kind":"KubeletConfiguration"})");
  EXPECT_EQ(Set(R"({"containerRuntimeEndpoint":null})"),
            R"({"containerRuntimeEndpoint":"npipe://./pipe/dxshim"})");
  EXPECT_EQ(Set(R"({"containerRuntimeEndpoint":"x"})", R"(\\.\pipe\a "b")"),
            R"({"containerRuntimeEndpoint":"\\\\.\\pipe\\a \"b\""})");
}

TEST(NodeConfigFile, JsonPrettyWithCrlf) {
  const std::string json =
      "{\r\n"
      "    \"kind\": \"KubeletConfiguration\",\r\n"
      "    \"containerRuntimeEndpoint\": \"npipe://./pipe/containerd-containerd\"\r\n"
      "}";
  EXPECT_EQ(Set(json),
            "{\r\n"
            "    \"kind\": \"KubeletConfiguration\",\r\n"
            "    \"containerRuntimeEndpoint\": \"npipe://./pipe/dxshim\"\r\n"
            "}");
  EXPECT_EQ(Set("{\r\n    \"kind\": \"K\"\r\n}\r\n"),
            "{\r\n    \"containerRuntimeEndpoint\": \"npipe://./pipe/dxshim\",\r\n"
            "    \"kind\": \"K\"\r\n}\r\n");
}

TEST(NodeConfigFile, JsonEmptyObject) {
  EXPECT_EQ(Set("{}"), R"({"containerRuntimeEndpoint": "npipe://./pipe/dxshim"})");
  // An empty object over two lines keeps its line break (found by kubelet_config_edit_fuzz: the
  // edit replaced it).
  EXPECT_EQ(Set("{\n}"), "{\"containerRuntimeEndpoint\": \"npipe://./pipe/dxshim\"\n}");
  EXPECT_EQ(Set("{ \n }\n"), "{\"containerRuntimeEndpoint\": \"npipe://./pipe/dxshim\" \n }\n");
}

TEST(NodeConfigFile, ReadsOnlyScalars) {
  EXPECT_EQ(ReadTopLevelString("a: 'x y'\n", "a"), "x y");
  EXPECT_EQ(ReadTopLevelString("{\"a\": 5}", "a"), "5");
  EXPECT_EQ(ReadTopLevelString("a: \"\"\n", "a"), "");
  EXPECT_FALSE(ReadTopLevelString("a: b\n", "c"));
  EXPECT_FALSE(ReadTopLevelString("", "c"));
  EXPECT_TRUE(
      Has(ErrorOf([] { ReadTopLevelString("a:\n  - x\n", "a"); }), "\"a\" is not a string"));
  EXPECT_TRUE(Has(ErrorOf([] { ReadTopLevelString("- a\n- b\n", "a"); }), "not a mapping"));
}

TEST(NodeConfigFile, RefusesWhatItCannotEditSafely) {
  EXPECT_TRUE(Has(ErrorOf([] { Set("a: [b\n"); }), "does not parse as YAML: line"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("{\"a\": }}"); }), "kubelet config (JSON) does not parse"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("# flow\n{kind: K}\n"); }), "flow-style"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("kind: A\n---\nkind: B\n"); }), "more than one YAML document"));
  EXPECT_TRUE(
      Has(ErrorOf([] { Set("containerRuntimeEndpoint: a\ncontainerRuntimeEndpoint: b\n"); }),
          "line 2: key \"containerRuntimeEndpoint\" is there a second time"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("kind: K\ncontainerRuntimeEndpoint: |\n  x\n"); }),
                  "line 2: the value is an alias, has an anchor or a tag, or is a block scalar"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("containerRuntimeEndpoint: !!str x\n"); }), "a tag"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("containerRuntimeEndpoint: two\n  lines\n"); }),
                  "continues past its first line"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("containerRuntimeEndpoint:\n  a: b\n"); }),
                  "is not a string but a list or a mapping"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("- a\n"); }), "not a mapping"));
  EXPECT_TRUE(Has(ErrorOf([] { Set(std::string_view("\xFF\xFEk\0x", 5)); }), "UTF-16"));
  // The self-check: appending after an end-of-document marker would start a second document.
  EXPECT_TRUE(Has(ErrorOf([] { Set("kind: K\n...\n"); }),
                  "setting \"containerRuntimeEndpoint\" would break the file"));
}

}  // namespace
}  // namespace dxshim::install
