// The injection plan (shim/gpu/injection.h) on the example inventories: the T4's Windows mapping
// exactly (device, System32 and SysWOW64 mounts, labels, explanation), what is already there kept
// and deduplicated, only files present on the host mounted, gone files named, a mount in any form
// kubelet sends recognised, and the linux target's mapping.
#include "shim/gpu/injection.h"

#include <gtest/gtest.h>

#include "shim/base/dxshim_keys.h"
#include "tests/support/gpu_requests.h"

namespace dxshim {
namespace {

const std::string kStore =
    "C:\\Windows\\System32\\DriverStore\\FileRepository\\nvgridsw_aws.inf_amd64_5b7ec8f2a8e3b31a";

using test::LoadExampleInventory;
using test::WindowsTarget;

TEST(Injection, TheT4WindowsMappingExactly) {
  const auto t4 = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  runtime::v1::ContainerConfig config;
  const auto plan = PlanInjection(config, {t4}, false, "why", std::nullopt, WindowsTarget());
  ASSERT_EQ(plan.add_devices.size(), 1u);
  EXPECT_EQ(plan.add_devices[0].host_path(), "vpci-location-path://PCIROOT(0)#PCI(1E00)");
  EXPECT_EQ(plan.add_devices[0].container_path(), "");
  EXPECT_EQ(plan.add_devices[0].permissions(), "");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"nvcudadebugger.dll", "C:\\Windows\\System32\\nvcudadebugger.dll"},
      {"nvcuda_loader64.dll", "C:\\Windows\\System32\\nvcuda.dll"},
      {"nvcuvid64.dll", "C:\\Windows\\System32\\nvcuvid.dll"},
      {"nvEncodeAPI64.dll", "C:\\Windows\\System32\\nvEncodeAPI64.dll"},
      {"nvapi64.dll", "C:\\Windows\\System32\\nvapi64.dll"},
      {"nvml_loader.dll", "C:\\Windows\\System32\\nvml.dll"},
      {"OpenCL64.dll", "C:\\Windows\\System32\\OpenCL.dll"},
      {"vulkan-1-x64.dll", "C:\\Windows\\System32\\vulkan-1.dll"},
      {"nvcuda_loader32.dll", "C:\\Windows\\SysWOW64\\nvcuda.dll"},
      {"nvcuvid32.dll", "C:\\Windows\\SysWOW64\\nvcuvid.dll"},
      {"nvEncodeAPI.dll", "C:\\Windows\\SysWOW64\\nvEncodeAPI.dll"},
      {"nvapi.dll", "C:\\Windows\\SysWOW64\\nvapi.dll"},
      {"OpenCL32.dll", "C:\\Windows\\SysWOW64\\OpenCL.dll"},
      {"vulkan-1-x86.dll", "C:\\Windows\\SysWOW64\\vulkan-1.dll"},
  };
  ASSERT_EQ(plan.add_mounts.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(plan.add_mounts[i].host_path(), kStore + "\\" + expected[i].first);
    EXPECT_EQ(plan.add_mounts[i].container_path(), expected[i].second);
    EXPECT_TRUE(plan.add_mounts[i].readonly());
  }
  EXPECT_EQ(plan.labels.at(keys::kDevicesLabel), t4.id);
  EXPECT_EQ(plan.labels.at(keys::kSharingLabel), "shared");
  EXPECT_EQ(plan.annotations.at(keys::kExplanationAnnotation),
            "why; 14 runtime file(s); env CUDA_VISIBLE_DEVICES, DXSHIM_GPU_LUIDS, "
            "DXSHIM_GPU_LOCATION_PATHS, DXSHIM_GPU_VENDOR_IDS, DXSHIM_GPU_MEMORY_TOTAL_BYTES");
}

TEST(Injection, KeepsWhatIsThereAndDeduplicatesCaseInsensitively) {
  const auto t4 = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  runtime::v1::ContainerConfig config;
  auto* own = config.add_mounts();
  own->set_host_path("C:\\mine\\OpenCL.dll");
  own->set_container_path("c:\\windows\\system32\\opencl.DLL");
  config.add_devices()->set_host_path("VPCI-LOCATION-PATH://pciroot(0)#pci(1e00)");
  const auto plan = PlanInjection(config, {t4, t4}, true, "why", std::nullopt, WindowsTarget());
  EXPECT_TRUE(plan.add_devices.empty());   // already there, in other case
  EXPECT_EQ(plan.add_mounts.size(), 13u);  // the pod's own OpenCL.dll stays, ours is not added
  EXPECT_EQ(plan.labels.at(keys::kSharingLabel), "exclusive");
  auto rewritten = config;
  ApplyPlan(plan, rewritten);
  EXPECT_EQ(rewritten.mounts(0).host_path(), "C:\\mine\\OpenCL.dll");  // first, unchanged
  EXPECT_EQ(rewritten.mounts_size(), 14);
  EXPECT_EQ(rewritten.devices_size(), 1);
}

TEST(Injection, OnlyFilesThatExistOnTheHost) {
  const auto t4 = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  auto target = WindowsTarget();
  target.host_file = [](const std::string& path) {
    return path.ends_with("nvapi64.dll") ? HostFileState::kPresent : HostFileState::kAbsent;
  };
  const auto plan =
      PlanInjection(runtime::v1::ContainerConfig{}, {t4}, false, "why", std::nullopt, target);
  ASSERT_EQ(plan.add_mounts.size(), 1u);
  EXPECT_EQ(plan.add_mounts[0].container_path(), "C:\\Windows\\System32\\nvapi64.dll");
  EXPECT_EQ(plan.notes.size(), 13u);
  EXPECT_NE(plan.notes[0].find("missing on this host"), std::string::npos);
  EXPECT_TRUE(plan.gone.empty());
}

// A file that was there and is not any more is not mounted and not skipped quietly: the plan
// names it, and the interceptor re-reads the devices (gpu_interceptor_test.cpp).
TEST(Injection, GoneFilesAreNamedNotMounted) {
  const auto t4 = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  auto target = WindowsTarget();
  target.host_file = [](const std::string& path) {
    return path.ends_with("nvapi64.dll") ? HostFileState::kGone : HostFileState::kPresent;
  };
  const auto plan =
      PlanInjection(runtime::v1::ContainerConfig{}, {t4}, false, "why", std::nullopt, target);
  EXPECT_EQ(plan.add_mounts.size(), 13u);
  EXPECT_EQ(plan.gone, (std::vector<std::string>{kStore + "\\nvapi64.dll"}));
}

// Kubelet on Windows sends a pod volume's mountPath as c:/... (makeAbsolutePath); containerd
// cleans it. Each of these forms already mounts the T4's nvcuda.dll, so dxshim adds none of its
// own.
TEST(Injection, AMountInAnyFormKubeletSendsIsAlreadyMounted) {
  const auto t4 = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  for (const char* form :
       {"c:/Windows/System32/nvcuda.dll", "C:\\Windows\\System32\\NVCUDA.DLL",
        "\\Windows\\System32\\nvcuda.dll", "c:\\windows\\system32\\.\\nvcuda.dll"}) {
    SCOPED_TRACE(form);
    runtime::v1::ContainerConfig config;
    auto* own = config.add_mounts();
    own->set_host_path("c:\\var\\lib\\kubelet\\pods\\uid\\volumes\\nvcuda.dll");
    own->set_container_path(form);
    const auto plan = PlanInjection(config, {t4}, false, "why", std::nullopt, WindowsTarget());
    EXPECT_EQ(plan.add_mounts.size(), 13u);
    for (const auto& m : plan.add_mounts) {
      EXPECT_NE(m.container_path(), "C:\\Windows\\System32\\nvcuda.dll");
    }
    ASSERT_EQ(plan.notes.size(), 1u);
    EXPECT_EQ(plan.notes[0], "C:\\Windows\\System32\\nvcuda.dll: already mounted, " + kStore +
                                 "\\nvcuda_loader64.dll not added");
  }
  // SysWOW64's nvcuda.dll is another file: still added.
  runtime::v1::ContainerConfig config;
  config.add_mounts()->set_container_path("c:/Windows/SysWOW64/nvcuda.dll");
  EXPECT_EQ(PlanInjection(config, {t4}, false, "", std::nullopt, WindowsTarget()).add_mounts.size(),
            13u);
}

TEST(Injection, LinuxMapping) {
  devices::Device d;
  d.id = "0000:01:00.0";
  d.location_path = "/dev/dri/renderD128";
  d.driver_store = "/opt/driver/";
  d.system32 = {{"lib\\libcuda.so.1", "libcuda.so.1"}};
  d.syswow64 = {{"lib32/libcuda.so.1", "libcuda.so.1"}};
  TargetOptions t;
  t.linux_system32_path = "/usr/lib/gpu";
  const auto plan = PlanInjection({}, {d}, false, "why", std::nullopt, t);
  ASSERT_EQ(plan.add_devices.size(), 1u);
  EXPECT_EQ(plan.add_devices[0].host_path(), "/dev/dri/renderD128");
  EXPECT_EQ(plan.add_devices[0].container_path(), "/dev/dri/renderD128");
  EXPECT_EQ(plan.add_devices[0].permissions(), "rw");
  ASSERT_EQ(plan.add_mounts.size(), 2u);
  EXPECT_EQ(plan.add_mounts[0].host_path(), "/opt/driver/lib/libcuda.so.1");
  EXPECT_EQ(plan.add_mounts[0].container_path(), "/usr/lib/gpu/libcuda.so.1");
  EXPECT_EQ(plan.add_mounts[1].container_path(), "/usr/lib32/dxshim/libcuda.so.1");
}

// A DriverStore folder with non-ASCII characters (as Windows names it, converted from UTF-16 with
// CP_UTF8) becomes the same UTF-8 bytes in each mount's host_path, through protobuf and back.
TEST(Injection, ANonAsciiDriverStoreIsMountedAsTheSameUtf8Bytes) {
  auto t4 = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  const std::string store =
      "C:\\Windows\\System32\\DriverStore\\FileRepository\\nvmiig.inf_amd64_"
      "\xc3\xb1\xe2\x82\xac\xe6\xbc\xa2";  // ñ€漢
  t4.driver_store = store + "\\";
  const auto plan = PlanInjection(runtime::v1::ContainerConfig{}, {t4}, false, "why", std::nullopt,
                                  WindowsTarget());
  EXPECT_TRUE(plan.not_utf8.empty());
  ASSERT_EQ(plan.add_mounts.size(), 14u);
  EXPECT_EQ(plan.add_mounts[1].host_path(), store + "\\nvcuda_loader64.dll");
  runtime::v1::CreateContainerRequest request;
  ApplyPlan(plan, *request.mutable_config());
  runtime::v1::CreateContainerRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(request.SerializeAsString()));
  EXPECT_EQ(parsed.config().mounts(1).host_path(), store + "\\nvcuda_loader64.dll");
}

// Text that is not UTF-8 (here as a CP_ACP conversion would leave it: Latin-1 é, or a lone
// surrogate in CESU-8) is listed, each naming the request field and the GPU or file it came from.
TEST(Injection, TextThatIsNotUtf8IsListedWithItsFieldAndGpu) {
  auto t4 = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  t4.system32 = {{"nvapi64.dll", "nvapi64.dll"}, {"nv\xed\xa0\x80.dll", "nvcuda.dll"}};
  t4.syswow64 = {{"nvapi.dll", "nvapi\xe9.dll"}};
  auto plan = PlanInjection({}, {t4}, false, "why", std::nullopt, WindowsTarget());
  EXPECT_EQ(plan.not_utf8,
            (std::vector<std::string>{
                "mount host_path is not valid UTF-8 (byte 0xED at offset 89 of '" + kStore +
                    "\\nv\\xED\\xA0\\x80.dll'), from GPU " + t4.id +
                    "'s runtime file nv\\xED\\xA0\\x80.dll => nvcuda.dll in its DriverStore folder",
                "mount container_path is not valid UTF-8 (byte 0xE9 at offset 25 of "
                "'C:\\Windows\\SysWOW64\\nvapi\\xE9.dll'), from GPU " +
                    t4.id + "'s runtime file nvapi.dll => nvapi\\xE9.dll"}));
  // A file already mounted by the pod is not written, so not checked.
  runtime::v1::ContainerConfig config;
  config.add_mounts()->set_container_path("C:\\Windows\\System32\\nvcuda.dll");
  EXPECT_EQ(
      PlanInjection(config, {t4}, false, "why", std::nullopt, WindowsTarget()).not_utf8.size(), 1u);

  // The device's location path reaches the device entry and the environment; the explanation
  // (made of the devices' descriptions) its annotation.
  auto bad = LoadExampleInventory("nvidia-t4.yaml").devices.at(0);
  bad.location_path = "PCIROOT(0)#PCI(1E00\xff)";
  plan = PlanInjection({}, {bad}, false, "T4 \xc0\xaf", std::nullopt, WindowsTarget());
  ASSERT_EQ(plan.not_utf8.size(), 3u);
  EXPECT_TRUE(
      plan.not_utf8[0].starts_with("device host_path is not valid UTF-8 (byte 0xFF at "
                                   "offset 40 of 'vpci-location-path://PCIROOT(0)#PCI("
                                   "1E00\\xFF)'), from GPU " +
                                   bad.id + "'s location path"))
      << plan.not_utf8[0];
  EXPECT_TRUE(plan.not_utf8[1].starts_with(
      "env DXSHIM_GPU_LOCATION_PATHS value is not valid UTF-8 (byte 0xFF"))
      << plan.not_utf8[1];
  EXPECT_TRUE(plan.not_utf8[2].starts_with(
      "annotation dxshim.io/explanation value is not valid UTF-8 (byte 0xC0 at offset 3 of 'T4 "
      "\\xC0\\xAF; 14 runtime file(s)"))
      << plan.not_utf8[2];
  EXPECT_NE(plan.not_utf8[2].find("from the device inventory's facts on GPU " + bad.id),
            std::string::npos);
}

}  // namespace
}  // namespace dxshim
