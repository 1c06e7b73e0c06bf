// doctor's "other GPU device plugins" line on kubelet's checkpoint written in a folder that stands
// in for device-plugin-dir (kubelet's format, as kubelet_checkpoint_test reads it): ok with none
// registered (dxshim's own and other resources are not GPU plugins) or no checkpoint yet; failed
// with one registered while dxshim's device plugin is on (each GPU advertised twice), naming each
// resource and its count and the fix; a warning with dxshim's plugin off (annotations only); a
// checkpoint that is not one is a warning, not known.
#include "shim/doctor/other_gpu_plugins_check.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace dxshim::doctor {
namespace {

class OtherGpuPluginsCheck : public testing::Test {
 protected:
  OtherGpuPluginsCheck() {
    cfg_.device_plugin = true;
    cfg_.device_plugin_dir = dir_.path();
  }

  void WriteCheckpoint(const std::string& registered) {
    std::ofstream(dir_ / "kubelet_internal_checkpoint")
        << R"({"Data":{"PodDeviceEntries":null,"RegisteredDevices":{)" << registered
        << R"(}},"Checksum":1083090442})";
  }

  test::TempDir dir_;
  config::ServeConfig cfg_;
};

TEST_F(OtherGpuPluginsCheck, NoneRegisteredIsOk) {
  WriteCheckpoint(R"("dxshim.io/gpu":["gpu-0"],"dxshim.io/gpu-memory":["m-0"],)"
                  R"("example.com/fpga":["fpga-0"])");
  const auto line = CheckOtherGpuPlugins(cfg_);
  EXPECT_EQ(line.check, "other GPU device plugins");
  EXPECT_EQ(line.status, Status::kOk);
  EXPECT_EQ(line.detail, "none registered with kubelet");
}

TEST_F(OtherGpuPluginsCheck, NoCheckpointYetIsOk) {
  const auto line = CheckOtherGpuPlugins(cfg_);
  EXPECT_EQ(line.status, Status::kOk);
  EXPECT_EQ(line.detail, "kubelet has no checkpoint yet (no " +
                             dir_ / "kubelet_internal_checkpoint" +
                             "): no device plugin has registered");
}

TEST_F(OtherGpuPluginsCheck, OneRegisteredBesideDxshimsPluginFails) {
  WriteCheckpoint(R"("dxshim.io/gpu":["gpu-0"],"microsoft.com/directx":["0","1"],)"
                  R"("directx.microsoft.com/display":null)");
  const auto line = CheckOtherGpuPlugins(cfg_);
  EXPECT_EQ(line.status, Status::kFailed);
  EXPECT_EQ(line.detail,
            "kubelet has another GPU device plugin registered: directx.microsoft.com/display "
            "(registered, no healthy device now; kubelet drops it 5 min after its plugin left), "
            "microsoft.com/directx (2 devices); each GPU is then advertised twice, once per "
            "resource, and kubelet gives the same GPU to a pod of each resource");
  EXPECT_EQ(line.fix,
            "on AKS, create the Windows GPU node pool with `--gpu-driver none` (az aks nodepool "
            "add; AKS then installs neither the driver nor its DirectX device plugin) and install "
            "the GPU driver yourself, or delete the other plugin's DaemonSet; elsewhere, remove "
            "the other device plugin from this node");
}

TEST_F(OtherGpuPluginsCheck, OneRegisteredWithDxshimsPluginOffIsAWarning) {
  cfg_.device_plugin = false;
  WriteCheckpoint(R"("directx.microsoft.com/compute":["c-0"])");
  const auto line = CheckOtherGpuPlugins(cfg_);
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_EQ(line.detail,
            "kubelet has another GPU device plugin registered: directx.microsoft.com/compute (1 "
            "device); dxshim's device plugin is off (device-plugin false), but the other plugin "
            "and dxshim's annotations both hand out the same GPUs: a pod of the other resource "
            "and a pod asking dxshim by annotation can get the same GPU");
  EXPECT_NE(line.fix.find("--gpu-driver none"), std::string::npos);
}

TEST_F(OtherGpuPluginsCheck, DxshimsConfiguredResourceIsItsOwn) {
  cfg_.device_plugin_resource = "nvidia.com/gpu";
  WriteCheckpoint(R"("nvidia.com/gpu":["gpu-0"])");
  EXPECT_EQ(CheckOtherGpuPlugins(cfg_).status, Status::kOk);
}

TEST_F(OtherGpuPluginsCheck, ACheckpointThatIsNotOneIsAWarning) {
  std::ofstream(dir_ / "kubelet_internal_checkpoint") << "{\"Data\": [";
  const auto line = CheckOtherGpuPlugins(cfg_);
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_EQ(
      line.detail.rfind(dir_ / "kubelet_internal_checkpoint" + " cannot be read: not JSON", 0), 0u)
      << line.detail;
}

}  // namespace
}  // namespace dxshim::doctor
