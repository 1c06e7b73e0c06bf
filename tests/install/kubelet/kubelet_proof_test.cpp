// The proof that kubelet talks to dxshim (shim/install/kubelet/kubelet_proof.h), asked of dxshim
// over the pipe that only the dxshim service's process serves.
#include "shim/install/kubelet/kubelet_proof.h"

#include <gtest/gtest.h>

#include "tests/install/fake_launchers.h"

namespace dxshim::install::test {
namespace {

TEST(NodeKubeletProof, TheProofBelievesOnlyThePipesServerAndNeedsEveryKubelet) {
  FakeNode node;
  BaseNode(node);
  EksShape(node);
  FakeProbe probe(node);
  const ProofTarget target{"\\\\.\\pipe\\dxshim", "dxshim"};
  EXPECT_EQ(CheckKubeletUses(node, probe, target).what, "the dxshim service does not run");
  node.files[kDxshimConfig] = "listen: npipe://./pipe/dxshim\r\n";
  node.AddService("dxshim", kDxshimCommand);
  node.pipes["\\\\.\\pipe\\dxshim"] = 77;  // somebody else's
  EXPECT_NE(CheckKubeletUses(node, probe, target).what.find("its server is pid 77"),
            std::string::npos);
  node.pipes["\\\\.\\pipe\\dxshim"] = node.service("dxshim").state.pid;
  const auto proof = CheckKubeletUses(node, probe, target);
  EXPECT_FALSE(proof.ok) << "the kubelet runs on containerd's pipe";
  EXPECT_NE(proof.what.find("has made no CRI call through \\\\.\\pipe\\dxshim"), std::string::npos)
      << proof.what;
}

}  // namespace
}  // namespace dxshim::install::test
