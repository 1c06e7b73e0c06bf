// Another GPU device plugin by its resource in kubelet's checkpoint
// (shim/install/kubelet/other_gpu_plugins.h cites each name): AKS's DirectX plugin under both names
// its page shows, TensorWorks' MCDM and WDDM plugins, the Linux ones; never dxshim's own, nor
// another extended resource. A resource with no healthy device counts, and says so. Read from the
// node's checkpoint file, as install reads it.
#include "shim/install/kubelet/other_gpu_plugins.h"

#include <gtest/gtest.h>

#include "tests/install/fake_node.h"

namespace dxshim::install {
namespace {

using Registered = std::map<std::string, std::vector<std::string>>;

TEST(OtherGpuPlugins, EachKnownGpuResourceIsAnotherPlugin) {
  for (const std::string name :
       {"microsoft.com/directx", "microsoft.com.directx/gpu", "directx.microsoft.com/compute",
        "directx.microsoft.com/display", "nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(OtherGpuPlugins({{name, {"a", "b"}}}), (std::vector<OtherGpuPlugin>{{name, 2}}));
  }
}

TEST(OtherGpuPlugins, DxshimsOwnAndOtherResourcesAreNot) {
  const Registered registered = {
      {"dxshim.io/gpu", {"gpu-0"}},     {"dxshim.io/gpu-memory", {"m-0", "m-1"}},
      {"example.com/fpga", {"fpga-0"}}, {"microsoft.com/directx-other", {"x"}},
      {"nvidia.com/gpu.shared", {"x"}}, {"smarter-devices/fuse", {"fuse"}}};
  EXPECT_TRUE(OtherGpuPlugins(registered).empty());
  // dxshim configured to advertise under a name another plugin uses is still dxshim.
  EXPECT_TRUE(OtherGpuPlugins({{"nvidia.com/gpu", {"gpu-0"}}}, {"nvidia.com/gpu"}).empty());
}

TEST(OtherGpuPlugins, AResourceWithNoHealthyDeviceCountsAndSaysSo) {
  const auto found = OtherGpuPlugins({{"dxshim.io/gpu", {"gpu-0"}},
                                      {"directx.microsoft.com/display", {}},
                                      {"microsoft.com/directx", {"1"}}});
  ASSERT_EQ(found, (std::vector<OtherGpuPlugin>{{"directx.microsoft.com/display", 0},
                                                {"microsoft.com/directx", 1}}));
  EXPECT_EQ(DescribeOtherGpuPlugins(found, true),
            "kubelet has another GPU device plugin registered: directx.microsoft.com/display "
            "(registered, no healthy device now; kubelet drops it 5 min after its plugin left), "
            "microsoft.com/directx (1 device); each GPU is then advertised twice, once per "
            "resource, and kubelet gives the same GPU to a pod of each resource");
  EXPECT_NE(DescribeOtherGpuPlugins(found, false)
                .find("dxshim's device plugin is off (device-plugin false), but the other plugin "
                      "and dxshim's annotations both hand out the same GPUs"),
            std::string::npos);
}

TEST(OtherGpuPlugins, ReadFromKubeletsCheckpointOnTheNode) {
  test::FakeNode node;
  const std::string dir = "C:\\var\\lib\\kubelet\\device-plugins";
  EXPECT_TRUE(OtherGpuPluginsOn(node, dir).empty()) << "no checkpoint: none registered";
  node.files[dir + "\\kubelet_internal_checkpoint"] =
      R"({"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"dxshim.io/gpu":["gpu-0"],)"
      R"("microsoft.com/directx":["0","1"]}},"Checksum":1})";
  EXPECT_EQ(OtherGpuPluginsOn(node, dir),
            (std::vector<OtherGpuPlugin>{{"microsoft.com/directx", 2}}));
  EXPECT_EQ(OtherGpuPluginsOn(node, dir + "\\"), OtherGpuPluginsOn(node, dir));
  node.files[dir + "\\kubelet_internal_checkpoint"] = "[1]";
  try {
    OtherGpuPluginsOn(node, dir);
    ADD_FAILURE() << "not a checkpoint, read as one";
  } catch (const NodeError& e) {
    EXPECT_EQ(std::string(e.what()), "kubelet's checkpoint " + dir +
                                         "\\kubelet_internal_checkpoint cannot be read: it has "
                                         "no \"Data\" object");
  }
}

}  // namespace
}  // namespace dxshim::install
