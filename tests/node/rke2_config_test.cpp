// rke2's config.yaml has kubelet-arg read and set in every shape it comes in (block list with
// quoted or plain items, flow list, single string, null, absent, an existing
// container-runtime-endpoint item) by changing only the bytes it must; idempotent, self-checked,
// and refusing what it cannot edit.
#include "shim/node/rke2_config.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "shim/node/command_line.h"
#include "tests/node/edit_errors.h"

namespace dxshim::node {
namespace {

using test::ErrorOf;
using test::Has;

constexpr std::string_view kEndpoint = "container-runtime-endpoint";
constexpr std::string_view kDxshim = "npipe:////./pipe/dxshim";

std::string Set(std::string_view text, std::string_view name = kEndpoint,
                std::string_view value = kDxshim) {
  const std::string out = SetRke2KubeletArg(text, name, value);
  EXPECT_EQ(SetRke2KubeletArg(out, name, value), out) << "not idempotent";
  EXPECT_EQ(ReadRke2KubeletArg(out, name), std::optional<std::string>(value));
  return out;
}

const std::string kBlock =
    "token: secret\n"
    "server: https://10.0.0.1:9345\n"
    "kubelet-arg:\n"
    "  - \"max-pods=250\"\n"
    "  - \"container-runtime-endpoint=npipe:////./pipe/containerd-containerd\"\n"
    "node-label:\n"
    "  - \"gpu=true\"\n";

TEST(NodeRke2Config, ReadsKubeletArgs) {
  EXPECT_EQ(ReadRke2KubeletArg(kBlock, kEndpoint), "npipe:////./pipe/containerd-containerd");
  EXPECT_EQ(ReadRke2KubeletArg(kBlock, "max-pods"), "250");
  EXPECT_FALSE(ReadRke2KubeletArg(kBlock, "gpu"));
  EXPECT_FALSE(ReadRke2KubeletArg("token: x\n", kEndpoint));
  EXPECT_FALSE(ReadRke2KubeletArg("", kEndpoint));
  EXPECT_EQ(ReadRke2KubeletArg("kubelet-arg: [\"v=2\", \"--v=4\", \"v_x\"]\n", "v"), "4");
  EXPECT_EQ(ReadRke2KubeletArg("kubelet-arg: [\"v=2\", \"--v=4\", \"v_x\"]\n", "v-x"), "true");
  EXPECT_EQ(ReadRke2KubeletArg("kubelet-arg: max-pods=100\n", "max-pods"), "100");
}

TEST(NodeRke2Config, ReplacesAnExistingItemInPlace) {
  EXPECT_EQ(Set(kBlock),
            "token: secret\n"
            "server: https://10.0.0.1:9345\n"
            "kubelet-arg:\n"
            "  - \"max-pods=250\"\n"
            "  - \"container-runtime-endpoint=npipe:////./pipe/dxshim\"\n"
            "node-label:\n"
            "  - \"gpu=true\"\n");
  EXPECT_EQ(SetRke2KubeletArg(kBlock, kEndpoint, "npipe:////./pipe/containerd-containerd"), kBlock);
  EXPECT_EQ(Set("kubelet-arg:\n- --container-runtime-endpoint=old # set by hand\n"),
            "kubelet-arg:\n- --container-runtime-endpoint=npipe:////./pipe/dxshim # set by hand\n");
  EXPECT_EQ(Set("kubelet-arg:\n  - 'container_runtime_endpoint=a'\n  - 'v=2'\n"
                "  - 'container-runtime-endpoint=b'\n"),
            "kubelet-arg:\n  - 'container_runtime_endpoint=npipe:////./pipe/dxshim'\n  - 'v=2'\n"
            "  - 'container-runtime-endpoint=npipe:////./pipe/dxshim'\n");
}

TEST(NodeRke2Config, AppendsToABlockList) {
  const std::string crlf =
      "kubelet-arg:\r\n    -   \"max-pods=250\"  # more pods\r\n"
      "write-kubeconfig-mode: \"0644\"\r\n";
  EXPECT_EQ(Set(crlf),
            "kubelet-arg:\r\n    -   \"max-pods=250\"  # more pods\r\n"
            "    -   \"container-runtime-endpoint=npipe:////./pipe/dxshim\"\r\n"
            "write-kubeconfig-mode: \"0644\"\r\n");
  EXPECT_EQ(
      Set("kubelet-arg:\n- max-pods=250\n- v=2"),
      "kubelet-arg:\n- max-pods=250\n- v=2\n- container-runtime-endpoint=npipe:////./pipe/dxshim");
  EXPECT_EQ(Set("kubelet-arg:\n  - 'max-pods=250'\n", "root-dir", R"(C:\var\lib\kubelet)"),
            "kubelet-arg:\n  - 'max-pods=250'\n  - 'root-dir=C:\\var\\lib\\kubelet'\n");
}

TEST(NodeRke2Config, AppendsToAFlowList) {
  EXPECT_EQ(Set("kubelet-arg: [\"max-pods=250\", \"v=2\"]\ntoken: x\n"),
            "kubelet-arg: [\"max-pods=250\", \"v=2\", "
            "\"container-runtime-endpoint=npipe:////./pipe/dxshim\"]\ntoken: x\n");
  EXPECT_EQ(Set("kubelet-arg: [max-pods=250]\n"),
            "kubelet-arg: [max-pods=250, container-runtime-endpoint=npipe:////./pipe/dxshim]\n");
  EXPECT_EQ(Set("kubelet-arg: [\n    \"a=1\",\n    \"b=2\"\n  ]\n"),
            "kubelet-arg: [\n    \"a=1\",\n    \"b=2\",\n    "
            "\"container-runtime-endpoint=npipe:////./pipe/dxshim\"\n  ]\n");
  EXPECT_EQ(Set("kubelet-arg: []\n"),
            "kubelet-arg: [\"container-runtime-endpoint=npipe:////./pipe/dxshim\"]\n");
  EXPECT_EQ(Set("kubelet-arg: [\"container-runtime-endpoint=x\", \"v=2\"]\n"),
            "kubelet-arg: [\"container-runtime-endpoint=npipe:////./pipe/dxshim\", \"v=2\"]\n");
}

TEST(NodeRke2Config, ASingleStringBecomesAFlowList) {
  EXPECT_EQ(Set("kubelet-arg: \"max-pods=250\"\n"),
            "kubelet-arg: [\"max-pods=250\", "
            "\"container-runtime-endpoint=npipe:////./pipe/dxshim\"]\n");
  EXPECT_EQ(Set("kubelet-arg: feature-gates=A=true,B=false\n"),
            "kubelet-arg: ['feature-gates=A=true,B=false', "
            "\"container-runtime-endpoint=npipe:////./pipe/dxshim\"]\n");
  EXPECT_EQ(Set("kubelet-arg: 'container-runtime-endpoint=x'\n"),
            "kubelet-arg: 'container-runtime-endpoint=npipe:////./pipe/dxshim'\n");
}

TEST(NodeRke2Config, AnAbsentOrNullKeyIsAdded) {
  EXPECT_EQ(Set("token: secret\r\nnode-name: gpu1\r\n"),
            "token: secret\r\nnode-name: gpu1\r\nkubelet-arg:\r\n"
            "  - \"container-runtime-endpoint=npipe:////./pipe/dxshim\"\r\n");
  EXPECT_EQ(Set("token: secret"),
            "token: secret\nkubelet-arg:\n"
            "  - \"container-runtime-endpoint=npipe:////./pipe/dxshim\"\n");
  EXPECT_EQ(Set(""), "kubelet-arg:\n  - \"container-runtime-endpoint=npipe:////./pipe/dxshim\"\n");
  EXPECT_EQ(Set("kubelet-arg: # none yet\ntoken: x\n"),
            "kubelet-arg: [\"container-runtime-endpoint=npipe:////./pipe/dxshim\"] # none yet\n"
            "token: x\n");
}

TEST(NodeRke2Config, RefusesWhatItCannotEdit) {
  EXPECT_TRUE(Has(ErrorOf([] { Set("kubelet-arg:\n  a: b\n"); }), "is a mapping"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("kubelet-arg:\n  - [a]\n"); }), "line 2: an item"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("{kubelet-arg: [a=b]}"); }), "flow-style"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("a: b\n---\nc: d\n"); }), "more than one YAML document"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("kubelet-arg: [\n"); }), "does not parse"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("a: b\n", "--v"); }), "without dashes"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("kubelet-arg: [a]\nkubelet-arg: [b]\n"); }), "second time"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("kubelet-arg:\n  - &x a=b\n"); }), "anchor"));
  EXPECT_TRUE(
      Has(ErrorOf([] { ReadRke2KubeletArg("kubelet-arg:\n  - {a: b}\n", "a"); }), "not a string"));
}

}  // namespace
}  // namespace dxshim::node
