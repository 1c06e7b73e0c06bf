// The placement (devices/allocation/placement.h) as the pure choice it is: the same inventory,
// usage, request and policy always give the same devices, explanation and considered lines; the
// usage it is handed (not any state of its own) decides what has room; the three refusals name
// the request and each matching GPU's pods. Devices come from the example inventories (no GPU
// here); the ledger's use of it, with holds and sharing over time: tests/ledger/ledger_test.cpp.
#include "devices/allocation/placement.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "devices/inventory_file.h"

namespace dxshim::devices {
namespace {

Inventory Hetero() {  // T4 #0, T4 #1 (same driver), AMD
  Inventory inv;
  inv.devices =
      LoadInventoryFile(DXSHIM_SOURCE_DIR "/deploy/examples/inventories/hetero-node.yaml");
  return inv;
}

DeviceRequest Request(const std::map<std::string, std::string>& annotations) {
  return *ParseDeviceRequest(annotations);
}

AllocationPolicy Policy(unsigned max, SpreadOrPack order = SpreadOrPack::kSpread) {
  AllocationPolicy p;
  p.max_containers_per_device = max;
  p.spread_or_pack = order;
  return p;
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

// A device held by pods that each recorded `each` bytes.
DeviceUsage Held(const std::vector<std::pair<std::string, std::uint64_t>>& pods) {
  DeviceUsage u;
  for (const auto& [pod, bytes] : pods) {
    ++u.pods;
    u.memory += bytes;
    u.holders.push_back({pod, bytes, false, pod, 0});
  }
  return u;
}

TEST(SpreadOrPack, TheSameInputsGiveTheSameChoice) {
  const auto node = Hetero();
  const auto nvidia = Request({{"dxshim.io/vendor", "nvidia"}});
  const auto policy = Policy(4, SpreadOrPack::kSpread);
  const auto first = Choose(node, {}, nvidia, policy);
  const auto again = Choose(node, {}, nvidia, policy);
  ASSERT_EQ(first.devices.size(), 1u);
  EXPECT_EQ(first.devices[0].id, node.devices[0].id);  // ties: inventory order
  EXPECT_EQ(again.devices[0].id, first.devices[0].id);
  EXPECT_EQ(again.explanation, first.explanation);
  EXPECT_EQ(again.considered, first.considered);
  EXPECT_EQ(first.explanation, "gpu=1 vendor=nvidia shared -> NVIDIA Tesla T4 [" +
                                   node.devices[0].location_path +
                                   "] (reserves 3840Mi of 15Gi, 15Gi free and 0/4 pods before); "
                                   "spread over 2 matching GPU(s)");
  ASSERT_EQ(first.considered.size(), 3u);  // both T4s, then the AMD that does not match
  EXPECT_EQ(first.considered[0],
            "NVIDIA Tesla T4 [" + node.devices[0].location_path + "]: chosen, 0/4 pods, 15Gi free");
  EXPECT_EQ(first.considered[1],
            "NVIDIA Tesla T4 [" + node.devices[1].location_path +
                "]: matches, 0/4 pods, 15Gi free, spread preferred another (ties: "
                "inventory order)");
  EXPECT_EQ(first.considered[2],
            "AMD Radeon Pro V520 MxGPU [" + node.devices[2].location_path + "]: vendor amd");
}

TEST(SpreadOrPack, TheUsageItIsGivenDecides) {
  const auto node = Hetero();
  const auto nvidia = Request({{"dxshim.io/vendor", "nvidia"}});
  const Usage first_busy = {{node.devices[0].id, {1, false, 0, 0, {}}}};
  EXPECT_EQ(Choose(node, first_busy, nvidia, Policy(4, SpreadOrPack::kSpread)).devices[0].id,
            node.devices[1].id);  // least loaded
  EXPECT_EQ(Choose(node, first_busy, nvidia, Policy(4, SpreadOrPack::kPack)).devices[0].id,
            node.devices[0].id);  // fill first
  const Usage first_exclusive = {{node.devices[0].id, {1, true, 0, 0, {}}}};
  const auto placed = Choose(node, first_exclusive, nvidia, Policy(4, SpreadOrPack::kPack));
  EXPECT_EQ(placed.devices[0].id, node.devices[1].id);  // shared requests stay off exclusive ones
  EXPECT_EQ(placed.considered[0], "NVIDIA Tesla T4 [" + node.devices[0].location_path +
                                      "]: matches, 1/4 pods " + "(exclusive), 0B free, full");
}

TEST(SpreadOrPack, EachRefusalNamesTheRequestAndThePods) {
  const auto node = Hetero();
  const auto policy = Policy(1, SpreadOrPack::kSpread);
  auto message = Refusal(node, {}, Request({{"dxshim.io/vendor", "intel"}}), policy,
                         AllocationError::Kind::kImpossible);
  EXPECT_NE(message.find("no GPU matches the request (gpu=1 vendor=intel shared); this node has: "
                         "NVIDIA Tesla T4 (nvidia, display, 15360Mi)"),
            std::string::npos)
      << message;
  message = Refusal(node, {}, Request({{"dxshim.io/gpu", "3"}}), policy,
                    AllocationError::Kind::kVendorMix);
  EXPECT_NE(
      message.find("3 GPUs match the request (gpu=3 shared) but no 3 of them share one vendor"),
      std::string::npos)
      << message;
  const Usage all_busy = {
      {node.devices[0].id, {1, false, 0, 1, {{"default/a", std::nullopt, false, "a", 0}}}},
      {node.devices[1].id, {1, true, 0, 0, {{"default/b", 1ull << 30, true, "b", 0}}}}};
  message = Refusal(node, all_busy, Request({{"dxshim.io/vendor", "nvidia"}}), policy,
                    AllocationError::Kind::kExhausted);
  EXPECT_EQ(message,
            "all 2 GPU(s) matching the request (gpu=1 vendor=nvidia shared) are in use: "
            "NVIDIA Tesla T4 [" +
                node.devices[0].location_path +
                "]: 15Gi, 15Gi reserved (default/a 15Gi by default), 0B free, 1/1 pods; " +
                "NVIDIA Tesla T4 [" + node.devices[1].location_path +
                "]: 15Gi, 15Gi reserved (default/b 15Gi exclusive), 0B free, 1/1 pods "
                "(exclusive)");
}

// GPU memory (gpu_memory.h): spread takes the most free memory, pack the best fit, defaults and
// exclusive pods reserve what they should, and the two refusals on memory.
constexpr std::uint64_t kGi = 1ull << 30;
constexpr std::uint64_t kMi = 1ull << 20;

TEST(SpreadOrPack, SpreadTakesTheMostFreeMemoryPackTheBestFit) {
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
  const auto packed = Choose(node, usage, any, Policy(8, SpreadOrPack::kPack));
  EXPECT_EQ(packed.devices[0].id, t4a);
  EXPECT_EQ(packed.memory, std::vector<std::uint64_t>{4 * kGi});
  EXPECT_NE(packed.explanation.find("(reserves 4Gi of 15Gi, 5Gi free and 1/8 pods before)"),
            std::string::npos)
      << packed.explanation;
  // 6Gi fits neither the 5Gi T4 in pack order: the AMD (8Gi free) is the best fit.
  EXPECT_EQ(Choose(node, usage, Request({{"dxshim.io/gpu-memory", "6Gi"}}),
                   Policy(8, SpreadOrPack::kPack))
                .devices[0]
                .id,
            amd);
  // Equal free memory: fewer pods first for spread, more for pack.
  const Usage even = {{t4a, Held({{"default/a", 2 * kGi}})},
                      {t4b, Held({{"default/b", kGi}, {"default/c", kGi}})}};
  const auto nvidia = Request({{"dxshim.io/vendor", "nvidia"}, {"dxshim.io/gpu-memory", "1Gi"}});
  EXPECT_EQ(Choose(node, even, nvidia, Policy(8)).devices[0].id, t4a);
  EXPECT_EQ(Choose(node, even, nvidia, Policy(8, SpreadOrPack::kPack)).devices[0].id, t4b);
  // Two GPUs: the amount on each.
  const auto two = Choose(
      node, {}, Request({{"dxshim.io/gpu", "2"}, {"dxshim.io/gpu-memory", "6Gi"}}), Policy(8));
  EXPECT_EQ(two.memory, (std::vector<std::uint64_t>{6 * kGi, 6 * kGi}));
}

TEST(SpreadOrPack, DefaultsAndExclusivePods) {
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

TEST(SpreadOrPack, MoreThanAnyGpuHasIsFailedPreconditionWithTheNodesMemory) {
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

TEST(SpreadOrPack, NotNextToWhatIsHeldIsResourceExhaustedNamingThePods) {
  auto node = Hetero();
  node.devices.resize(1);  // one T4, 15Gi
  const Usage usage = {
      {node.devices[0].id, Held({{"default/a", 6 * kGi}, {"default/b", 6 * kGi}})}};
  const auto message = Refusal(node, usage, Request({{"dxshim.io/gpu-memory", "6Gi"}}), Policy(8),
                               AllocationError::Kind::kMemoryExhausted);
  EXPECT_EQ(message,
            "the request (gpu=1 gpu-memory=6Gi shared) reserves 6Gi of GPU memory per GPU, more "
            "than is free now on the 1 matching GPU(s): NVIDIA Tesla T4 [" +
                node.devices[0].location_path +
                "]: 15Gi, 12Gi reserved (default/a 6Gi, default/b 6Gi), 3Gi free, 2/8 pods");
  // Twenty pods of 512Mi: the first eight by name are named, then how many more.
  std::vector<std::pair<std::string, std::uint64_t>> many;
  for (int i = 10; i < 30; ++i) many.emplace_back("default/p" + std::to_string(i), 512ull << 20);
  const auto crowded =
      Refusal(node, {{node.devices[0].id, Held(many)}}, Request({{"dxshim.io/gpu-memory", "6Gi"}}),
              Policy(32), AllocationError::Kind::kMemoryExhausted);
  EXPECT_NE(crowded.find("10Gi reserved (default/p10 512Mi, default/p11 512Mi, "),
            std::string::npos)
      << crowded;
  EXPECT_NE(crowded.find("default/p17 512Mi and 12 more pods), 5Gi free, 20/32 pods"),
            std::string::npos)
      << crowded;
  EXPECT_EQ(crowded.find("default/p18"), std::string::npos) << crowded;
  // 3Gi still fits; a pod count that is full is the old refusal.
  EXPECT_NO_THROW(Choose(node, usage, Request({{"dxshim.io/gpu-memory", "3Gi"}}), Policy(8)));
  Refusal(node, usage, Request({{"dxshim.io/gpu-memory", "1Gi"}}), Policy(2),
          AllocationError::Kind::kExhausted);
}

}  // namespace
}  // namespace dxshim::devices
