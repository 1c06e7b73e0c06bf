// The environment that names a container's GPUs (shim/gpu/gpu_environment.h) and how the
// injection adds it: only what the pod does not set itself, named in the explanation. The GPUs
// are the example inventories' (no Windows GPU exists here).
#include "shim/gpu/gpu_environment.h"

#include <gtest/gtest.h>

#include "devices/inventory_file.h"
#include "shim/base/dxshim_keys.h"
#include "shim/gpu/injection.h"

namespace dxshim {
namespace {

const std::string kExamples = DXSHIM_SOURCE_DIR "/deploy/examples/inventories/";

std::vector<devices::Device> Load(const std::string& name) {
  return devices::LoadInventoryFile(kExamples + name);
}

using Variables = std::vector<std::pair<std::string, std::string>>;

TEST(GpuEnvironment, AnNvidiaGpuWithItsUuid) {
  const auto env = GpuEnvironmentFor({Load("nvidia-t4.yaml").at(0)});
  EXPECT_EQ(env.variables, (Variables{
                               {"CUDA_VISIBLE_DEVICES", "GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"},
                               {"DXSHIM_GPU_LUIDS", "0x00000000_0x0000D1A2"},
                               {"DXSHIM_GPU_LOCATION_PATHS", "PCIROOT(0)#PCI(1E00)"},
                               {"DXSHIM_GPU_VENDOR_IDS", "0x10de"},
                               {"DXSHIM_GPU_MEMORY_TOTAL_BYTES", "16106127360"},
                           }));
  EXPECT_TRUE(env.notes.empty());
}

TEST(GpuEnvironment, TwoGpusInAllocationOrder) {
  const auto node = Load("hetero-node.yaml");  // T4 (1E00), T4 (1F00), AMD V520
  const auto env = GpuEnvironmentFor({node.at(1), node.at(0)});
  EXPECT_EQ(
      env.variables,
      (Variables{
          {"CUDA_VISIBLE_DEVICES",
           "GPU-1a2b3c4d-6e7f-4a8b-9c0d-e1f2a3b4c5d6,GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"},
          {"DXSHIM_GPU_LUIDS", "0x00000000_0x0000D1C4,0x00000000_0x0000D1A2"},
          {"DXSHIM_GPU_LOCATION_PATHS", "PCIROOT(0)#PCI(1F00),PCIROOT(0)#PCI(1E00)"},
          {"DXSHIM_GPU_VENDOR_IDS", "0x10de,0x10de"},
          {"DXSHIM_GPU_MEMORY_TOTAL_BYTES", "16106127360"},
      }));
}

TEST(GpuEnvironment, AmdAndIntelGetOnlyDxshimVariables) {
  for (const auto& [inventory, vendor] :
       {std::pair{"hetero-node.yaml", "0x1002"}, {"intel-igpu.yaml", "0x8086"}}) {
    const auto devices = Load(inventory);
    const auto env = GpuEnvironmentFor({devices.back()});
    ASSERT_EQ(env.variables.size(), 4u) << inventory;
    EXPECT_EQ(env.variables[0].first, "DXSHIM_GPU_LUIDS");
    EXPECT_EQ(env.variables[2],
              (std::pair<std::string, std::string>{"DXSHIM_GPU_VENDOR_IDS", vendor}));
    EXPECT_TRUE(env.notes.empty());
  }
}

TEST(GpuEnvironment, NoCudaVariableWhenAnNvidiaGpuHasNoUuid) {
  // Hiding from CUDA a GPU the container was given would be wrong: nothing is set, and said.
  auto node = Load("hetero-node.yaml");
  node.at(1).uuid.clear();
  const auto env = GpuEnvironmentFor({node.at(0), node.at(1)});
  ASSERT_EQ(env.variables.size(), 4u);
  EXPECT_EQ(env.variables[0].first, "DXSHIM_GPU_LUIDS");
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_EQ(env.notes[0], "CUDA_VISIBLE_DEVICES not set: no UUID known for " + node.at(1).id);
}

TEST(GpuEnvironment, HowDiscoveryFoundEachUuidIsSaid) {
  // Windows discovery says how it found each UUID (devices/gpu_uuids.h), or why it found none.
  auto node = Load("hetero-node.yaml");
  node.at(0).uuid_found_by = "cuda-luid";
  node.at(1).uuid_found_by = "nvml-pci";
  auto env = GpuEnvironmentFor({node.at(0), node.at(1)});
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_EQ(env.notes[0], "CUDA_VISIBLE_DEVICES: " + node.at(0).uuid + " (cuda-luid), " +
                              node.at(1).uuid + " (nvml-pci)");
  node.at(1).uuid.clear();
  node.at(1).uuid_found_by = "none: NVML sees 2 NVIDIA GPUs";
  env = GpuEnvironmentFor({node.at(0), node.at(1)});
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_EQ(env.notes[0], "CUDA_VISIBLE_DEVICES not set: no UUID known for " + node.at(1).id +
                              " (none: NVML sees 2 NVIDIA GPUs)");
}

TEST(GpuEnvironment, TheBudgetAndTheSmallestGpusTotalMemory) {
  const auto node = Load("hetero-node.yaml");  // T4 15Gi, T4 15Gi, AMD V520 8Gi
  auto env = GpuEnvironmentFor({node.at(0), node.at(2)}, 3ull << 30);
  ASSERT_EQ(env.variables.size(), 6u);
  EXPECT_EQ(env.variables[4],
            (std::pair<std::string, std::string>{"DXSHIM_GPU_MEMORY_BYTES", "3221225472"}));
  EXPECT_EQ(env.variables[5],
            (std::pair<std::string, std::string>{"DXSHIM_GPU_MEMORY_TOTAL_BYTES", "8589934592"}));
  // A GPU whose memory is not known: no total (a budget of the whole would be a guess), said so.
  auto unknown = node.at(1);
  unknown.dedicated_memory = 0;
  env = GpuEnvironmentFor({node.at(0), unknown});
  for (const auto& [name, value] : env.variables) EXPECT_NE(name, "DXSHIM_GPU_MEMORY_TOTAL_BYTES");
  ASSERT_EQ(env.notes.size(), 1u);
  EXPECT_EQ(env.notes[0],
            "DXSHIM_GPU_MEMORY_TOTAL_BYTES not set: no memory known for " + unknown.id);
}

TEST(GpuEnvironment, NoGpuNoVariables) {
  const auto env = GpuEnvironmentFor({});
  EXPECT_TRUE(env.variables.empty());
}

TargetOptions Target(config::Target t) {
  TargetOptions options;
  options.target = t;
  return options;
}

std::vector<std::string> Keys(const InjectionPlan& plan) {
  std::vector<std::string> keys;
  for (const auto& e : plan.add_envs) keys.push_back(e.key());
  return keys;
}

TEST(GpuEnvironment, ThePodsOwnVariableIsKeptAndSaidSo) {
  const auto t4 = Load("nvidia-t4.yaml").at(0);
  runtime::v1::ContainerConfig config;
  auto* own = config.add_envs();
  own->set_key("cuda_visible_devices");  // Windows' environment ignores case
  own->set_value("0");
  const auto plan =
      PlanInjection(config, {t4}, false, "why", std::nullopt, Target(config::Target::kWindows));
  EXPECT_EQ(Keys(plan),
            (std::vector<std::string>{"DXSHIM_GPU_LUIDS", "DXSHIM_GPU_LOCATION_PATHS",
                                      "DXSHIM_GPU_VENDOR_IDS", "DXSHIM_GPU_MEMORY_TOTAL_BYTES"}));
  EXPECT_EQ(plan.annotations.at(keys::kExplanationAnnotation),
            "why; 14 runtime file(s); env DXSHIM_GPU_LUIDS, DXSHIM_GPU_LOCATION_PATHS, "
            "DXSHIM_GPU_VENDOR_IDS, DXSHIM_GPU_MEMORY_TOTAL_BYTES; kept the pod's own "
            "CUDA_VISIBLE_DEVICES");
  auto rewritten = config;
  ApplyPlan(plan, rewritten);
  ASSERT_EQ(rewritten.envs_size(), 5);
  EXPECT_EQ(rewritten.envs(0).value(), "0");  // first, unchanged
  EXPECT_EQ(rewritten.envs(1).key(), "DXSHIM_GPU_LUIDS");

  // Linux names are case-sensitive: another variable there.
  const auto on_linux =
      PlanInjection(config, {t4}, false, "why", std::nullopt, Target(config::Target::kLinux));
  EXPECT_EQ(on_linux.add_envs.size(), 5u);
  config.mutable_envs(0)->set_key("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(PlanInjection(config, {t4}, false, "why", std::nullopt, Target(config::Target::kLinux))
                .add_envs.size(),
            4u);
}

TEST(GpuEnvironment, TheLinuxTargetNamesDeviceNodes) {
  auto t4 = Load("nvidia-t4.yaml").at(0);
  t4.location_path = "/dev/dxshim-test-0";
  const auto plan = PlanInjection(runtime::v1::ContainerConfig{}, {t4}, false, "why", std::nullopt,
                                  Target(config::Target::kLinux));
  ASSERT_EQ(plan.add_envs.size(), 5u);
  EXPECT_EQ(plan.add_envs[2].key(), "DXSHIM_GPU_LOCATION_PATHS");
  EXPECT_EQ(plan.add_envs[2].value(), "/dev/dxshim-test-0");
}

}  // namespace
}  // namespace dxshim
