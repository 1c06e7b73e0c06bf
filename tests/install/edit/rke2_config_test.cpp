// rke2's configuration read as rke2 reads it (shim/install/edit/rke2_config.h: k3s
// pkg/configfilearg and pkg/util/args.go GetArgs @2a1e2e8): the config file, then its drop-ins; a
// plain key replaces what earlier files set, a `+` key appends; a kubelet-arg item replaces rke2's
// default for that flag, `name+=` appends to it, `name-=` comes first; and dxshim's drop-in reads
// back as its items.
#include "shim/install/edit/rke2_config.h"

#include <gtest/gtest.h>

#include "shim/install/edit/command_line.h"

namespace dxshim::install {
namespace {

constexpr std::string_view kEndpoint = "container-runtime-endpoint";

TEST(NodeRke2Config, KubeletArgsFollowTheFilesInOrder) {
  const std::vector<Rke2ConfigFile> files = {
      {"config.yaml", "kubelet-arg:\n  - \"v=2\"\n  - max-pods=30\nnode-label:\n  - pool=gpu\n"},
      {"config.yaml.d/10.yaml", "kubelet-arg+: [\"a=1\"]\n"},
      {"config.yaml.d/20.yaml", "kubelet-arg: \"b=2\"\n"},
      {"config.yaml.d/30.yaml", "kubelet-arg+:\n  - c=3\n"}};
  EXPECT_EQ(Rke2KubeletArgs(files), (std::vector<std::string>{"b=2", "c=3"}));
  EXPECT_EQ(Rke2KubeletArgs({files[0], files[1]}),
            (std::vector<std::string>{"v=2", "max-pods=30", "a=1"}));
  EXPECT_TRUE(Rke2KubeletArgs({{"empty.yaml", ""}, {"null.yaml", "kubelet-arg:\n"}}).empty());
}

TEST(NodeRke2Config, TheLastValueOfAFlagIsWhatGetArgsGivesKubeletLast) {
  EXPECT_EQ(Rke2KubeletFlag({"v=2"}, kEndpoint), std::nullopt) << "rke2's default";
  EXPECT_EQ(Rke2KubeletFlag({"container-runtime-endpoint=a"}, kEndpoint), "a");
  EXPECT_EQ(Rke2KubeletFlag({"--container_runtime_endpoint=a", "container-runtime-endpoint=b"},
                            kEndpoint),
            "b");
  // `name-=` puts its value before the others: an earlier plain item stays last.
  EXPECT_EQ(
      Rke2KubeletFlag({"container-runtime-endpoint=a", "container-runtime-endpoint-=b"}, kEndpoint),
      "a");
  // `name+=` after rke2's default: the default comes first, the item last.
  EXPECT_EQ(Rke2KubeletFlag({"node-labels+=x=y"}, "node-labels"), "x=y");
  // `name-=` alone: rke2's default comes after it, and wins.
  EXPECT_EQ(Rke2KubeletFlag({"node-labels-=x=y"}, "node-labels"), std::nullopt);
  EXPECT_EQ(Rke2KubeletFlag({"container-runtime-endpoint"}, kEndpoint), "true");
}

TEST(NodeRke2Config, TheLastFileThatSetsASettingWins) {
  EXPECT_EQ(Rke2Setting({{"a", "node-name: one\n"}, {"b", "x: 1\n"}, {"c", "node-name: two\n"}},
                        "node-name"),
            "two");
  EXPECT_EQ(Rke2Setting({{"a", "x: 1\n"}}, "node-name"), std::nullopt);
}

TEST(NodeRke2Config, DxshimsDropInReadsBackAsItsItems) {
  const std::string text = Rke2DropInText({"container-runtime-endpoint=npipe://./pipe/dxshim"},
                                          {"dxshim.io/gpu.present=true", "a=\"q\""});
  const std::vector<Rke2ConfigFile> files = {{"config.yaml", "kubelet-arg: [\"v=2\"]\n"},
                                             {"config.yaml.d/zz-dxshim.yaml", text}};
  EXPECT_EQ(Rke2KubeletArgs(files),
            (std::vector<std::string>{"v=2", "container-runtime-endpoint=npipe://./pipe/dxshim"}));
  EXPECT_EQ(Rke2KubeletFlag(Rke2KubeletArgs(files), kEndpoint), "npipe://./pipe/dxshim");
  EXPECT_NE(text.find("node-label+:\n  - \"dxshim.io/gpu.present=true\"\n  - \"a=\\\"q\\\"\"\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(Rke2DropInText({}, {}).find("kubelet-arg"), std::string::npos);
}

TEST(NodeRke2Config, RefusesWhatItCannotRead) {
  EXPECT_THROW(Rke2KubeletArgs({{"bad.yaml", "kubelet-arg: [\n"}}), EditError);
  EXPECT_THROW(Rke2KubeletArgs({{"map.yaml", "kubelet-arg:\n  a: b\n"}}), EditError);
  EXPECT_THROW(Rke2KubeletArgs({{"list.yaml", "- a\n"}}), EditError);
}

}  // namespace
}  // namespace dxshim::install
