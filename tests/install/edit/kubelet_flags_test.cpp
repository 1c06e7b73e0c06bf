// kubelet's flags found, set and removed in real launcher shapes (a native service's ImagePath,
// EKS's service host, `--name value` pairs, paths with spaces, kubeadm-flags.env with LF, CRLF
// and no final newline) by changing only the bytes of their values; idempotent; bad input refused.
#include "shim/install/edit/kubelet_flags.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tests/install/edit_errors.h"

namespace dxshim::install {
namespace {

using test::ErrorOf;
using test::Has;

const std::string kNative =
    R"("C:\k\kubelet.exe" --config="C:\Program Files\kubelet\config.yaml" )"
    R"(--container-runtime-endpoint=npipe://./pipe/containerd-containerd --hostname-override=node1)";

const std::string kEks =
    R"("C:\Program Files\Amazon\EKS\bin\EKS-WindowsServiceHost.exe" kubelet )"
    R"("C:\Program Files\Kubernetes\kubelet.exe" --config="C:\ProgramData\kubernetes\kubelet-config.json" )"
    R"(--kubeconfig="C:\ProgramData\kubernetes\kubeconfig")";

constexpr std::string_view kEndpoint = "container-runtime-endpoint";
constexpr std::string_view kDxshim = "npipe://./pipe/dxshim";

TEST(NodeKubeletFlags, FindsFlagsOfANativeService) {
  const std::vector<Word> words = SplitCommandLine(kNative);
  const std::optional<FlagValue> config = FindFlag(words, "config");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->value, R"(C:\Program Files\kubelet\config.yaml)");
  EXPECT_EQ(config->word, 1u);
  EXPECT_FALSE(config->separate);
  const std::optional<FlagValue> endpoint = FindFlag(words, kEndpoint);
  ASSERT_TRUE(endpoint);
  EXPECT_EQ(endpoint->value, "npipe://./pipe/containerd-containerd");
  EXPECT_FALSE(FindFlag(words, "config-dir"));
  EXPECT_FALSE(FindFlag(words, "conf"));
}

TEST(NodeKubeletFlags, SetsTheEndpointOfANativeServiceInPlace) {
  const std::string out = SetFlag(kNative, kEndpoint, kDxshim, 1);
  EXPECT_EQ(out, R"("C:\k\kubelet.exe" --config="C:\Program Files\kubelet\config.yaml" )"
                 R"(--container-runtime-endpoint=npipe://./pipe/dxshim --hostname-override=node1)");
  EXPECT_EQ(SetFlag(out, kEndpoint, kDxshim, 1), out);
  EXPECT_EQ(SetFlag(kNative, kEndpoint, "npipe://./pipe/containerd-containerd", 1), kNative);
}

TEST(NodeKubeletFlags, AQuotedValueStaysQuoted) {
  const std::string out = SetFlag(kNative, "config", R"(C:\k\config.yaml)", 1);
  EXPECT_EQ(
      out,
      R"("C:\k\kubelet.exe" --config="C:\k\config.yaml" )"
      R"(--container-runtime-endpoint=npipe://./pipe/containerd-containerd --hostname-override=node1)");
  EXPECT_EQ(SetFlag(out, "config", R"(C:\k\config.yaml)", 1), out);
}

TEST(NodeKubeletFlags, AValueWithSpacesIsQuoted) {
  const std::string out = SetFlag(kNative, "hostname-override", "my node", 1);
  EXPECT_EQ(out.substr(out.rfind(' ', out.size() - 7) + 1), R"(--hostname-override="my node")");
  EXPECT_EQ(FindFlag(SplitCommandLine(out), "hostname-override")->value, "my node");
  EXPECT_EQ(SetFlag(out, "hostname-override", "my node", 1), out);
  // A directory with a trailing backslash inside quotes: the backslash is doubled.
  const std::string dir = SetFlag(kNative, "config", R"(C:\Program Files\k\)", 1);
  EXPECT_TRUE(Has(dir, R"(--config="C:\Program Files\k\\" --container)")) << dir;
  EXPECT_EQ(FindFlag(SplitCommandLine(dir), "config")->value, R"(C:\Program Files\k\)");
  EXPECT_EQ(FindFlag(SplitCommandLine(dir), kEndpoint)->value,
            "npipe://./pipe/containerd-containerd");
}

TEST(NodeKubeletFlags, AppendsAnAbsentFlag) {
  const std::string line = R"("C:\k\kubelet.exe" --config="C:\k\config.yaml")";
  const std::string out = SetFlag(line, kEndpoint, kDxshim, 1);
  EXPECT_EQ(out, line + " --container-runtime-endpoint=npipe://./pipe/dxshim");
  EXPECT_EQ(SetFlag(out, kEndpoint, kDxshim, 1), out);
  EXPECT_EQ(SetFlag(line, "root-dir", R"(C:\var lib\kubelet)", 1),
            line + R"( --root-dir="C:\var lib\kubelet")");
  EXPECT_EQ(SetFlag(R"(C:\k\kubelet.exe)", kEndpoint, kDxshim, 1),
            R"(C:\k\kubelet.exe --container-runtime-endpoint=npipe://./pipe/dxshim)");
}

TEST(NodeKubeletFlags, EksServiceHostFlagsStartAtWordThree) {
  const std::vector<Word> words = SplitCommandLine(kEks);
  ASSERT_EQ(words.size(), 5u);
  EXPECT_EQ(FindFlag(words, "config", 3)->value,
            R"(C:\ProgramData\kubernetes\kubelet-config.json)");
  const std::string out = SetFlag(kEks, kEndpoint, kDxshim, 3);
  EXPECT_EQ(out, kEks + " --container-runtime-endpoint=npipe://./pipe/dxshim");
  EXPECT_EQ(SetFlag(out, kEndpoint, kDxshim, 3), out);
  const std::string kubeconfig = SetFlag(kEks, "kubeconfig", R"(C:\k\kubeconfig)", 3);
  EXPECT_EQ(kubeconfig.substr(kubeconfig.rfind(' ') + 1), R"(--kubeconfig="C:\k\kubeconfig")");
}

TEST(NodeKubeletFlags, WordsBeforeFirstAreNotKubeletFlags) {
  const std::string line = "host.exe --config=host.json kubelet.exe --config=kubelet.yaml";
  EXPECT_EQ(FindFlag(SplitCommandLine(line), "config", 2)->value, "kubelet.yaml");
  EXPECT_EQ(FindFlag(SplitCommandLine(line), "config", 0)->value, "kubelet.yaml");
  EXPECT_EQ(FindFlag(SplitCommandLine(line), "config", 0)->word, 3u);
  EXPECT_EQ(SetFlag(line, "config", "k.yaml", 2),
            "host.exe --config=host.json kubelet.exe --config=k.yaml");
  EXPECT_EQ(RemoveFlag(line, "config", 2), "host.exe --config=host.json kubelet.exe");
}

TEST(NodeKubeletFlags, SeparateValuesKeepTheirForm) {
  const std::string line =
      R"(C:\k\kubelet.exe --config "C:\Program Files\k\config.yaml" )"
      R"(--container-runtime-endpoint npipe://./pipe/containerd-containerd --v 2)";
  const std::optional<FlagValue> endpoint = FindFlag(SplitCommandLine(line), kEndpoint, 1);
  ASSERT_TRUE(endpoint);
  EXPECT_TRUE(endpoint->separate);
  EXPECT_EQ(endpoint->word, 3u);
  EXPECT_EQ(endpoint->value, "npipe://./pipe/containerd-containerd");
  const std::string out = SetFlag(line, kEndpoint, kDxshim, 1);
  EXPECT_EQ(out, R"(C:\k\kubelet.exe --config "C:\Program Files\k\config.yaml" )"
                 R"(--container-runtime-endpoint npipe://./pipe/dxshim --v 2)");
  EXPECT_EQ(SetFlag(out, kEndpoint, kDxshim, 1), out);
  EXPECT_EQ(SetFlag(line, "config", R"(D:\c.yaml)", 1),
            R"(C:\k\kubelet.exe --config "D:\c.yaml" )"
            R"(--container-runtime-endpoint npipe://./pipe/containerd-containerd --v 2)");
  EXPECT_EQ(RemoveFlag(line, kEndpoint, 1),
            R"(C:\k\kubelet.exe --config "C:\Program Files\k\config.yaml" --v 2)");
}

TEST(NodeKubeletFlags, TheLastOccurrenceWinsAndEveryOneIsSet) {
  const std::string line =
      "kubelet.exe --v=2 --container-runtime-endpoint=a --v 4 "
      "--container_runtime_endpoint b --x=1";
  const std::optional<FlagValue> endpoint = FindFlag(SplitCommandLine(line), kEndpoint, 1);
  ASSERT_TRUE(endpoint);
  EXPECT_EQ(endpoint->value, "b");
  EXPECT_EQ(FindFlag(SplitCommandLine(line), "v", 1)->value, "4");
  EXPECT_EQ(FindFlagOccurrences(SplitCommandLine(line), kEndpoint, 1).size(), 2u);
  const std::string out = SetFlag(line, kEndpoint, kDxshim, 1);
  EXPECT_EQ(out,
            "kubelet.exe --v=2 --container-runtime-endpoint=npipe://./pipe/dxshim --v 4 "
            "--container_runtime_endpoint npipe://./pipe/dxshim --x=1");
  EXPECT_EQ(RemoveFlag(line, kEndpoint, 1), "kubelet.exe --v=2 --v 4 --x=1");
}

TEST(NodeKubeletFlags, BareBoolFlagsAndTheEndOfFlags) {
  const std::string line = "kubelet.exe --windows-service --config=c.yaml -- --config=other";
  const std::optional<FlagValue> service = FindFlag(SplitCommandLine(line), "windows-service", 1);
  ASSERT_TRUE(service);
  EXPECT_TRUE(service->bare);
  EXPECT_EQ(service->value, "true");
  EXPECT_EQ(FindFlag(SplitCommandLine(line), "config", 1)->value, "c.yaml");
  EXPECT_EQ(SetFlag(line, "windows-service", "true", 1), line);
  EXPECT_EQ(SetFlag(line, "windows-service", "false", 1),
            "kubelet.exe --windows-service=false --config=c.yaml -- --config=other");
  EXPECT_EQ(SetFlag(line, "config", "d.yaml", 1),
            "kubelet.exe --windows-service --config=d.yaml -- --config=other");
  EXPECT_EQ(RemoveFlag(line, "windows-service", 1),
            "kubelet.exe --config=c.yaml -- --config=other");
  EXPECT_EQ(SetFlag(line, kEndpoint, kDxshim, 1),
            "kubelet.exe --windows-service --config=c.yaml "
            "--container-runtime-endpoint=npipe://./pipe/dxshim -- --config=other");
  // A single dash is a shorthand, not this flag.
  EXPECT_FALSE(FindFlag(SplitCommandLine("kubelet.exe -config=x"), "config", 1));
}

TEST(NodeKubeletFlags, AWordQuotedWholeIsEditedInsideItsQuotes) {
  const std::string line = R"(kubelet.exe "--config=C:\Program Files\k.yaml" --v=2)";
  const std::string out = SetFlag(line, "config", R"(C:\new dir\k.yaml)", 1);
  EXPECT_EQ(out, R"(kubelet.exe "--config=C:\new dir\k.yaml" --v=2)");
  const std::string dir = SetFlag(line, "config", R"(C:\a "b"\)", 1);
  EXPECT_EQ(dir, R"(kubelet.exe "--config=C:\a \"b\"\\" --v=2)");
  EXPECT_EQ(FindFlag(SplitCommandLine(dir), "config", 1)->value, R"(C:\a "b"\)");
  EXPECT_EQ(FindFlag(SplitCommandLine(dir), "v", 1)->value, "2");
}

std::optional<std::string> ValueOf(std::string_view line, std::string_view name) {
  const std::optional<FlagValue> flag = FindFlag(SplitCommandLine(line), name, 1);
  if (!flag) return std::nullopt;
  return flag->value;
}

// Any value set into any shape of the flag reads back, and leaves the other flags as they were.
TEST(NodeKubeletFlags, AnyValueInAnyShapeReadsBack) {
  const std::vector<std::string> lines = {
      kNative,
      R"(kubelet.exe --config "C:\a b\c.yaml" --v=2)",
      R"(kubelet.exe "--config=C:\a b\" --v=2)",
      R"(kubelet.exe --config=C:\"a b"\c --v=2)",
      R"(kubelet.exe --config --v=2)",
      R"(kubelet.exe --v=2 "--config"=x)",
  };
  const std::vector<std::string> values = {
      "",       "x",         "a b",   R"(C:\dir\)", R"(C:\my dir\)",
      R"(a"b)", R"(a\"b c)", R"(\\)", "\t",         R"(" ")"};
  for (const std::string& line : lines) {
    for (const std::string& value : values) {
      const std::string out = SetFlag(line, "config", value, 1);
      const std::vector<Word> words = SplitCommandLine(out);
      ASSERT_EQ(ValueOf(out, "config"), value) << out;
      EXPECT_EQ(ValueOf(out, "v"), ValueOf(line, "v")) << out;
      EXPECT_EQ(words.size(), SplitCommandLine(line).size()) << out;
      EXPECT_EQ(SetFlag(out, "config", value, 1), out);
    }
  }
}

TEST(NodeKubeletFlags, RemoveFlag) {
  EXPECT_EQ(RemoveFlag(kNative, kEndpoint, 1),
            R"("C:\k\kubelet.exe" --config="C:\Program Files\kubelet\config.yaml" )"
            R"(--hostname-override=node1)");
  EXPECT_EQ(RemoveFlag(kNative, "hostname-override", 1),
            R"("C:\k\kubelet.exe" --config="C:\Program Files\kubelet\config.yaml" )"
            R"(--container-runtime-endpoint=npipe://./pipe/containerd-containerd)");
  EXPECT_EQ(RemoveFlag(kNative, "config-dir", 1), kNative);
  EXPECT_EQ(RemoveFlag("--a=1 --b=2", "a"), "--b=2");
}

TEST(NodeKubeletFlags, RefusesWhatItCannotEdit) {
  EXPECT_TRUE(Has(ErrorOf([] { SetFlag(kNative, "--config", "x", 1); }), "without dashes"));
  EXPECT_TRUE(Has(ErrorOf([] { SetFlag(kNative, "a b", "x", 1); }), "not a flag name"));
  EXPECT_TRUE(Has(ErrorOf([] { SetFlag(R"(kubelet.exe --config="C:\a)", kEndpoint, "x", 1); }),
                  "open quote"));
  EXPECT_TRUE(Has(ErrorOf([] { SetFlag("kubelet.exe", kEndpoint, "x", 3); }), "fewer than"));
}

const std::string kKubeadm =
    "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
    "--pod-infra-container-image=registry.k8s.io/pause:3.9\"\n";

TEST(NodeKubeadmFlags, ReadsTheArgs) {
  const std::optional<KubeadmFlags> flags = ReadKubeadmFlags(kKubeadm);
  ASSERT_TRUE(flags);
  EXPECT_EQ(flags->args,
            "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
            "--pod-infra-container-image=registry.k8s.io/pause:3.9");
  EXPECT_EQ(flags->begin, 22u);
  EXPECT_EQ(flags->end, kKubeadm.size() - 2);
  const std::vector<Word> words = SplitKubeadmArgs(flags->args);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(FindFlag(words, kEndpoint)->value, "npipe:////./pipe/containerd-containerd");
  EXPECT_FALSE(ReadKubeadmFlags("# nothing\nOTHER=1\n"));
  EXPECT_FALSE(ReadKubeadmFlags(""));
}

// A tab between the args separates them, as on the start script's command line: the launch is
// read, planned and put back by this one split.
TEST(NodeKubeadmFlags, ATabSeparatesTheArgs) {
  const std::string file =
      "KUBELET_KUBEADM_ARGS=\"--v=2\t--container-runtime-endpoint=npipe:////./pipe/c\"\n";
  const std::optional<KubeadmFlags> flags = ReadKubeadmFlags(file);
  ASSERT_TRUE(flags);
  const std::vector<Word> words = SplitKubeadmArgs(flags->args);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].text, "--v=2");
  EXPECT_EQ(FindFlag(words, kEndpoint)->value, "npipe:////./pipe/c");
  EXPECT_EQ(
      SetKubeadmFlag(file, kEndpoint, "npipe:////./pipe/dxshim"),
      "KUBELET_KUBEADM_ARGS=\"--v=2\t--container-runtime-endpoint=npipe:////./pipe/dxshim\"\n");
}

TEST(NodeKubeadmFlags, SetsTheEndpoint) {
  const std::string out = SetKubeadmFlag(kKubeadm, kEndpoint, "npipe:////./pipe/dxshim");
  EXPECT_EQ(out,
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/dxshim "
            "--pod-infra-container-image=registry.k8s.io/pause:3.9\"\n");
  EXPECT_EQ(SetKubeadmFlag(out, kEndpoint, "npipe:////./pipe/dxshim"), out);
}

TEST(NodeKubeadmFlags, KeepsCrlfAndAMissingFinalNewline) {
  const std::string crlf = "# written by kubeadm\r\nKUBELET_KUBEADM_ARGS=\"--a=b --v=2\"\r\n";
  const std::string out = SetKubeadmFlag(crlf, "v", "4");
  EXPECT_EQ(out, "# written by kubeadm\r\nKUBELET_KUBEADM_ARGS=\"--a=b --v=4\"\r\n");
  EXPECT_EQ(SetKubeadmFlag(out, "v", "4"), out);
  const std::string bare = "KUBELET_KUBEADM_ARGS=\"--a=b\"";
  const std::string appended = SetKubeadmFlag(bare, kEndpoint, "npipe:////./pipe/dxshim");
  EXPECT_EQ(appended,
            "KUBELET_KUBEADM_ARGS=\"--a=b --container-runtime-endpoint=npipe:////./pipe/dxshim\"");
  EXPECT_EQ(SetKubeadmFlag(appended, kEndpoint, "npipe:////./pipe/dxshim"), appended);
}

TEST(NodeKubeadmFlags, AppendsToEmptyArgsAndSetsSeparateValues) {
  EXPECT_EQ(SetKubeadmFlag("KUBELET_KUBEADM_ARGS=\"\"\n", kEndpoint, "npipe:////./pipe/dxshim"),
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/dxshim\"\n");
  EXPECT_EQ(SetKubeadmFlag("KUBELET_KUBEADM_ARGS=\"--v 2 --x\"\n", "v", "3"),
            "KUBELET_KUBEADM_ARGS=\"--v 3 --x\"\n");
}

TEST(NodeKubeadmFlags, RefusesWhatTheFileCannotCarry) {
  EXPECT_TRUE(Has(ErrorOf([] { SetKubeadmFlag(kKubeadm, "root-dir", "C:/a b"); }), "cannot carry"));
  EXPECT_TRUE(Has(ErrorOf([] { SetKubeadmFlag(kKubeadm, "root-dir", "a\"b"); }), "root-dir"));
  EXPECT_TRUE(Has(ErrorOf([] { SetKubeadmFlag(kKubeadm, "root-dir", R"(C:\k)"); }), "backslashes"));
  EXPECT_TRUE(Has(ErrorOf([] { SetKubeadmFlag("OTHER=1\n", kEndpoint, "x"); }),
                  "no KUBELET_KUBEADM_ARGS line"));
  EXPECT_TRUE(
      Has(ErrorOf([] { ReadKubeadmFlags("A=1\nKUBELET_KUBEADM_ARGS=--a=b\n"); }), "line 2"));
  EXPECT_TRUE(Has(
      ErrorOf([] { ReadKubeadmFlags("KUBELET_KUBEADM_ARGS=\"\"\nKUBELET_KUBEADM_ARGS=\"\"\n"); }),
      "second time"));
  EXPECT_TRUE(
      Has(ErrorOf([] { ReadKubeadmFlags("KUBELET_KUBEADM_ARGS=\"a \\\"b\\\"\"\n"); }), "quote"));
}

// Findings of tests/fuzz/kubelet_flags_fuzz.cpp.
TEST(NodeKubeletFlags, AppParametersAreArgumentsWithNoProgram) {
  // Flags from word 0 (NSSM's AppParameters): the first word is an argument, quotes and all.
  const std::string params = R"(--config="C:\k dir\config.yaml" --v=2)";
  EXPECT_EQ(FindFlag(SplitArguments(params), "config")->value, R"(C:\k dir\config.yaml)");
  const std::string out = SetFlag(params, "config", R"(C:\new dir\c.yaml)");
  EXPECT_EQ(out, R"(--config="C:\new dir\c.yaml" --v=2)");
  EXPECT_EQ(FindFlag(SplitArguments(out), "config")->value, R"(C:\new dir\c.yaml)");
  // Appended to empty parameters, a quoted value reads back whole.
  const std::string added = SetFlag("", "node-labels", "a=\"b c\"");
  EXPECT_EQ(FindFlag(SplitArguments(added), "node-labels")->value, "a=\"b c\"");
}

// Fuzzing (kubelet_flags_fuzz, found in a local CI run): a bare flag written inside quotes
// (`"--config"`) got its value after the closing quote, with that quote's close in the value:
// `"--config"=C:\Program Files\c.yaml"` read back as `--config=C:\Program`.
TEST(NodeKubeletFlags, ABareFlagInQuotesGetsItsValueInsideThem) {
  const std::string line = R"(C:\k\kubelet.exe "--config" --v=2)";
  const std::string out = SetFlag(line, "config", R"(C:\Program Files\c.yaml)", 1);
  EXPECT_EQ(out, R"(C:\k\kubelet.exe "--config=C:\Program Files\c.yaml" --v=2)");
  const auto found = FindFlagOccurrences(SplitCommandLine(out), "config", 1);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].value, R"(C:\Program Files\c.yaml)");
  // Not in quotes: as before, the value follows the flag.
  EXPECT_EQ(SetFlag("k.exe --config --v=2", "config", "a b", 1), R"(k.exe --config="a b" --v=2)");
}

TEST(NodeKubeletFlags, AValueThatLooksLikeAFlagJoinsItsName) {
  // `--v -3` would read as a bare --v and a flag -3.
  EXPECT_EQ(SetFlag("kubelet.exe --v x --a", "v", "-3", 1), "kubelet.exe --v=-3 --a");
  EXPECT_EQ(SetKubeadmFlag("KUBELET_KUBEADM_ARGS=\"--v x\"\n", "v", "-3"),
            "KUBELET_KUBEADM_ARGS=\"--v=-3\"\n");
}

TEST(NodeKubeletFlags, KubeadmFlagIsInsertedBeforeTheEndOfFlags) {
  // Appended after `--`, the flag would be an argument kubelet refuses.
  EXPECT_EQ(SetKubeadmFlag("KUBELET_KUBEADM_ARGS=\"--a=b -- c\"\n", "v", "3"),
            "KUBELET_KUBEADM_ARGS=\"--a=b --v=3 -- c\"\n");
}

TEST(NodeKubeletFlags, RemovesAFlagRepeatedAtTheStart) {
  // The first occurrence takes the blanks after it, the second the ones before it: one removal.
  EXPECT_EQ(RemoveFlag("--a=1 --a=2 --b", "a"), "--b");
  EXPECT_EQ(RemoveFlag("--a=1 --a=2", "a"), "");
}

}  // namespace
}  // namespace dxshim::install
