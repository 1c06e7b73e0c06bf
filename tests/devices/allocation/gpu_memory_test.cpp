// GPU memory as a shared GPU is divided by it (devices/allocation/gpu_memory.h) and the placement
// that counts it (placement.h): the dxshim.io/gpu-memory grammar and its errors, capacity and
// the default, spread (most free memory) and pack (best fit), and the two refusals on memory.
// Devices come from the example inventories (no GPU here).
#include "devices/allocation/gpu_memory.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "devices/allocation/placement.h"
#include "devices/inventory_file.h"

namespace dxshim::devices {
namespace {

constexpr std::uint64_t kGi = 1ull << 30;
constexpr std::uint64_t kMi = 1ull << 20;

Inventory Hetero() {  // T4 15Gi, T4 15Gi (same driver), AMD 8Gi
  Inventory inv;
  inv.devices =
      LoadInventoryFile(DXSHIM_SOURCE_DIR "/deploy/examples/inventories/hetero-node.yaml");
  return inv;
}

DeviceRequest Request(const std::map<std::string, std::string>& annotations) {
  return *ParseDeviceRequest(annotations);
}

AllocationPolicy Policy(unsigned max, Placement placement = Placement::kSpread) {
  AllocationPolicy p;
  p.max_containers_per_device = max;
  p.placement = placement;
  return p;
}

// A device held by pods that each recorded `each` bytes.
DeviceUsage Held(std::initializer_list<std::pair<const char*, std::uint64_t>> pods) {
  DeviceUsage u;
  for (const auto& [pod, bytes] : pods) {
    ++u.pods;
    u.memory += bytes;
    u.holders.push_back({pod, bytes, false});
  }
  return u;
}

std::string Refusal(const Inventory& node, const Usage& usage, const DeviceRequest& request,
                    const AllocationPolicy& policy, AllocationError::Kind kind) {
  try {
    Choose(node, usage, request, policy);
  } catch (const AllocationError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no AllocationError";
  return "";
}

TEST(GpuMemory, TheAnnotationIsAQuantityWithAUnit) {
  EXPECT_EQ(ParseGpuMemory("6Gi"), 6 * kGi);
  EXPECT_EQ(ParseGpuMemory("512Mi"), 512 * kMi);
  EXPECT_EQ(ParseGpuMemory("6442450944"), 6 * kGi);
  EXPECT_EQ(ParseGpuMemory("2G"), 2000000000u);
  for (const char* bad : {"", "0", "0Gi", "-1Gi", "6", "1048575", "6GB", "1.5Gi", "Gi", "6 Gi"}) {
    EXPECT_THROW(ParseGpuMemory(bad), std::invalid_argument) << bad;
  }
  try {
    ParseDeviceRequest({{"dxshim.io/gpu-memory", "6"}});
    ADD_FAILURE() << "accepted";
  } catch (const RequestError& e) {
    EXPECT_EQ(std::string(e.what()),
              "annotation dxshim.io/gpu-memory='6': has no unit: that is 6 bytes; write the unit, "
              "e.g. 6Gi or 6Mi");
  }
  try {
    ParseDeviceRequest({{"dxshim.io/gpu-memory", "-2Gi"}});
    ADD_FAILURE() << "accepted";
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("dxshim.io/gpu-memory='-2Gi': is negative"),
              std::string::npos)
        << e.what();
  }
  // With every other key.
  const auto r = Request({{"dxshim.io/gpu-memory", "4Gi"},
                          {"dxshim.io/gpu", "2"},
                          {"dxshim.io/vendor", "nvidia"},
                          {"dxshim.io/min-memory", "8Gi"},
                          {"dxshim.io/class", "display"},
                          {"dxshim.io/containers", "app"}});
  EXPECT_EQ(r.gpu_memory, 4 * kGi);
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(Describe(r),
            "gpu=2 class=display vendor=nvidia min-memory=8192Mi gpu-memory=4Gi shared");
}

TEST(GpuMemory, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0B");
  EXPECT_EQ(FormatBytes(6 * kGi), "6Gi");
  EXPECT_EQ(FormatBytes(3840 * kMi), "3840Mi");
  EXPECT_EQ(FormatBytes(kMi + kMi / 2), "1536Ki");
  EXPECT_EQ(FormatBytes(kMi + 1), "1.0Mi");
  EXPECT_EQ(FormatBytes(2ull << 40), "2Ti");
}

TEST(GpuMemory, CapacityDefaultAndWhatAHoldTakes) {
  const auto t4 = Hetero().devices[0];  // 15Gi
  auto policy = Policy(4);
  EXPECT_EQ(MemoryCapacity(t4, policy), 15 * kGi);
  EXPECT_EQ(DefaultGpuMemory(t4, policy), 15 * kGi / 4);
  policy.gpu_memory_reserved = kGi;
  EXPECT_EQ(MemoryCapacity(t4, policy), 14 * kGi);
  EXPECT_EQ(DefaultGpuMemory(t4, policy), 14 * kGi / 4);
  policy.default_gpu_memory = 2 * kGi;
  EXPECT_EQ(DefaultGpuMemory(t4, policy), 2 * kGi);
  EXPECT_EQ(HeldGpuMemory(t4, std::nullopt, false, policy), 2 * kGi);
  EXPECT_EQ(HeldGpuMemory(t4, 5 * kGi, false, policy), 5 * kGi);
  EXPECT_EQ(HeldGpuMemory(t4, 5 * kGi, true, policy), 14 * kGi);
  policy.gpu_memory_reserved = 64 * kGi;  // more than the GPU has: nothing to share
  EXPECT_EQ(MemoryCapacity(t4, policy), 0u);
}

TEST(GpuMemory, SpreadTakesTheMostFreeMemoryPackTheBestFit) {
  const auto node = Hetero();
  const auto& t4a = node.devices[0].id;
  const auto& t4b = node.devices[1].id;
  const auto& amd = node.devices[2].id;
  const Usage usage = {{t4a, Held({{"default/big", 10 * kGi}})},               // 5Gi free
                       {t4b, Held({{"default/a", kGi}, {"default/b", kGi}})},  // 13Gi free
                       {amd, Held({})}};                                       // 8Gi free
  const auto any = Request({{"dxshim.io/gpu-memory", "4Gi"}});
  // Across vendors: the AMD (8Gi free) is not preferred over the T4 with 13Gi.
  EXPECT_EQ(Choose(node, usage, any, Policy(8)).devices[0].id, t4b);
  // Pack: least free memory that still fits, so the 5Gi T4.
  const auto packed = Choose(node, usage, any, Policy(8, Placement::kPack));
  EXPECT_EQ(packed.devices[0].id, t4a);
  EXPECT_EQ(packed.memory, std::vector<std::uint64_t>{4 * kGi});
  EXPECT_NE(packed.explanation.find("(reserves 4Gi of 15Gi, 5Gi free and 1/8 pods before)"),
            std::string::npos)
      << packed.explanation;
  // 6Gi fits neither the 5Gi T4 in pack order: the AMD (8Gi free) is the best fit.
  EXPECT_EQ(
      Choose(node, usage, Request({{"dxshim.io/gpu-memory", "6Gi"}}), Policy(8, Placement::kPack))
          .devices[0]
          .id,
      amd);
  // Equal free memory: fewer pods first for spread, more for pack.
  const Usage even = {{t4a, Held({{"default/a", 2 * kGi}})},
                      {t4b, Held({{"default/b", kGi}, {"default/c", kGi}})}};
  const auto nvidia = Request({{"dxshim.io/vendor", "nvidia"}, {"dxshim.io/gpu-memory", "1Gi"}});
  EXPECT_EQ(Choose(node, even, nvidia, Policy(8)).devices[0].id, t4a);
  EXPECT_EQ(Choose(node, even, nvidia, Policy(8, Placement::kPack)).devices[0].id, t4b);
  // Two GPUs: the amount on each.
  const auto two = Choose(
      node, {}, Request({{"dxshim.io/gpu", "2"}, {"dxshim.io/gpu-memory", "6Gi"}}), Policy(8));
  EXPECT_EQ(two.memory, (std::vector<std::uint64_t>{6 * kGi, 6 * kGi}));
}

TEST(GpuMemory, DefaultsAndExclusivePods) {
  const auto node = Hetero();
  const auto& t4a = node.devices[0].id;
  // No amount: the default, each GPU's capacity over max-containers-per-device.
  const auto placed = Choose(node, {}, Request({{"dxshim.io/vendor", "amd"}}), Policy(4));
  EXPECT_EQ(placed.memory, std::vector<std::uint64_t>{2 * kGi});
  // Exclusive: the whole GPU, and only an unheld one.
  const auto exclusive = Choose(
      node, {{t4a, Held({{"default/a", kMi}})}},
      Request({{"dxshim.io/vendor", "nvidia"}, {"dxshim.io/sharing", "exclusive"}}), Policy(4));
  EXPECT_EQ(exclusive.devices[0].id, node.devices[1].id);
  EXPECT_EQ(exclusive.memory, std::vector<std::uint64_t>{15 * kGi});
  // gpu-memory-reserved lowers what is shared.
  auto policy = Policy(4);
  policy.gpu_memory_reserved = 3 * kGi;
  EXPECT_EQ(Choose(node, {}, Request({{"dxshim.io/vendor", "amd"}}), policy).memory,
            std::vector<std::uint64_t>{5 * kGi / 4});
}

TEST(GpuMemory, MoreThanAnyGpuHasIsFailedPreconditionWithTheNodesMemory) {
  const auto node = Hetero();
  auto message = Refusal(node, {}, Request({{"dxshim.io/gpu-memory", "16Gi"}}), Policy(4),
                         AllocationError::Kind::kMemoryTooLarge);
  EXPECT_EQ(message,
            "no GPU that matches the request (gpu=1 gpu-memory=16Gi shared) has 16Gi of memory "
            "to share; this node has: NVIDIA Tesla T4 (nvidia, display, 15360Mi); NVIDIA Tesla "
            "T4 (nvidia, display, 15360Mi); AMD Radeon Pro V520 MxGPU (amd, display, 8192Mi)");
  auto policy = Policy(4);
  policy.gpu_memory_reserved = kGi;
  message = Refusal(node, {}, Request({{"dxshim.io/gpu-memory", "15Gi"}}), policy,
                    AllocationError::Kind::kMemoryTooLarge);
  EXPECT_NE(message.find("(dedicated memory less gpu-memory-reserved 1Gi)"), std::string::npos)
      << message;
  // A request that matches nothing for another reason stays kImpossible.
  Refusal(node, {}, Request({{"dxshim.io/gpu-memory", "16Gi"}, {"dxshim.io/vendor", "intel"}}),
          Policy(4), AllocationError::Kind::kImpossible);
}

TEST(GpuMemory, NotNextToWhatIsHeldIsResourceExhaustedNamingThePods) {
  auto node = Hetero();
  node.devices.resize(1);  // one T4, 15Gi
  const Usage usage = {
      {node.devices[0].id, Held({{"default/a", 6 * kGi}, {"default/b", 6 * kGi}})}};
  const auto message = Refusal(node, usage, Request({{"dxshim.io/gpu-memory", "6Gi"}}), Policy(8),
                               AllocationError::Kind::kMemoryExhausted);
  EXPECT_EQ(message,
            "the request (gpu=1 gpu-memory=6Gi shared) reserves 6Gi per GPU of GPU memory, more "
            "than is free now on the 1 matching GPU(s): NVIDIA Tesla T4 [" +
                node.devices[0].location_path +
                "]: 15Gi, 12Gi reserved (default/a 6Gi, default/b 6Gi), 3Gi free, 2/8 pods");
  // 3Gi still fits; a pod count that is full is the old refusal.
  EXPECT_NO_THROW(Choose(node, usage, Request({{"dxshim.io/gpu-memory", "3Gi"}}), Policy(8)));
  Refusal(node, usage, Request({{"dxshim.io/gpu-memory", "1Gi"}}), Policy(2),
          AllocationError::Kind::kExhausted);
}

}  // namespace
}  // namespace dxshim::devices
