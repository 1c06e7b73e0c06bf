// kubelet's device manager checkpoint read as kubelet writes it (pkg/kubelet/cm/devicemanager/
// checkpoint/checkpoint.go: Data{PodDeviceEntries with DeviceIDs per NUMA node, AllocResp in
// base64; RegisteredDevices by resource}, Checksum): the registered devices of each resource,
// Go's null for an empty map or list, and clear errors for what is not a checkpoint.
#include "shim/install/kubelet/kubelet_checkpoint.h"

#include <gtest/gtest.h>

namespace dxshim::install {
namespace {

TEST(RegisteredDevices, ReadsEachResourcesDevicesFromKubeletsCheckpoint) {
  // As kubelet 1.2x writes it (json.Marshal of checkpoint.Data; Go escapes < > & as \u003c ...).
  const auto registered = RegisteredDevices(
      R"({"Data":{"PodDeviceEntries":[{"PodUID":"6d3e1f0a-1b2c-4d5e-8f90-a1b2c3d4e5f6",)"
      R"("ContainerName":"unreal","ResourceName":"dxshim.io/gpu",)"
      R"("DeviceIDs":{"-1":["gpu-0a1b2c3d-0"]},"AllocResp":"GgwKBGEmYhIEXHUwMDNj"}],)"
      R"("RegisteredDevices":{"dxshim.io/gpu":["gpu-0a1b2c3d-0","gpu-0a1b2c3d-1"],)"
      R"("dxshim.io/gpu-memory":[],"example.com/\u003cfoo\u003e":null}},"Checksum":1083090442})");
  EXPECT_EQ(registered, (std::map<std::string, std::vector<std::string>>{
                            {"dxshim.io/gpu", {"gpu-0a1b2c3d-0", "gpu-0a1b2c3d-1"}},
                            {"dxshim.io/gpu-memory", {}},
                            {"example.com/<foo>", {}}}));
}

TEST(RegisteredDevices, AKubeletWithNoPluginHasNone) {
  EXPECT_TRUE(RegisteredDevices(
                  R"({"Data":{"PodDeviceEntries":null,"RegisteredDevices":null},"Checksum":0})")
                  .empty());
  EXPECT_TRUE(RegisteredDevices(R"({"Data":{"PodDeviceEntries":[]},"Checksum":0})").empty());
}

TEST(RegisteredDevices, SaysWhatIsWrongWithWhatIsNotACheckpoint) {
  const auto error = [](const std::string& text) {
    try {
      RegisteredDevices(text);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error("[1, 2]"), "it has no \"Data\" object");
  EXPECT_EQ(error(R"({"Checksum": 1})"), "it has no \"Data\" object");
  EXPECT_EQ(error(R"({"Data":{"RegisteredDevices":[1]}})"),
            "\"RegisteredDevices\" is not an object");
  EXPECT_EQ(error(R"({"Data":{"RegisteredDevices":{"dxshim.io/gpu":"gpu-0"}}})"),
            "the devices of dxshim.io/gpu are not a list");
  EXPECT_EQ(error("{\"Data\": [").rfind("not JSON: ", 0), 0u);
}

}  // namespace
}  // namespace dxshim::install

namespace dxshim::install {
namespace {

TEST(PodDeviceEntries, ReadsWhichPodAndContainerHoldWhichDevices) {
  // Two NUMA nodes merged; the list form kubelet wrote before DevicesPerNUMA (v1.20) too.
  const auto entries = PodDeviceEntries(
      R"({"Data":{"PodDeviceEntries":[{"PodUID":"uid-a","ContainerName":"init",)"
      R"("ResourceName":"dxshim.io/gpu-memory","DeviceIDs":{"0":["mem-1-0"],"1":["mem-1-1"]},)"
      R"("AllocResp":""},{"PodUID":"uid-b","ContainerName":"app","ResourceName":"dxshim.io/gpu",)"
      R"("DeviceIDs":["gpu-1-0"],"AllocResp":""}],"RegisteredDevices":null},"Checksum":0})");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].pod_uid, "uid-a");
  EXPECT_EQ(entries[0].container, "init");
  EXPECT_EQ(entries[0].resource, "dxshim.io/gpu-memory");
  EXPECT_EQ(entries[0].device_ids, (std::vector<std::string>{"mem-1-0", "mem-1-1"}));
  EXPECT_EQ(entries[1].device_ids, (std::vector<std::string>{"gpu-1-0"}));
  EXPECT_TRUE(PodDeviceEntries(R"({"Data":{"PodDeviceEntries":null},"Checksum":0})").empty());
}

TEST(PodDeviceEntries, SaysWhatIsWrong) {
  const auto error = [](const std::string& text) {
    try {
      PodDeviceEntries(text);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error(R"({"Data":{"PodDeviceEntries":{}}})"), "\"PodDeviceEntries\" is not a list");
  EXPECT_EQ(error(R"({"Data":{"PodDeviceEntries":[{"ContainerName":"a"}]}})"),
            "an entry has no PodUID");
}

}  // namespace
}  // namespace dxshim::install
