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

AllocationPolicy Policy(unsigned max, Placement placement) {
  AllocationPolicy p;
  p.max_containers_per_device = max;
  p.placement = placement;
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

TEST(Placement, TheSameInputsGiveTheSameChoice) {
  const auto node = Hetero();
  const auto nvidia = Request({{"dxshim.io/vendor", "nvidia"}});
  const auto policy = Policy(4, Placement::kSpread);
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

TEST(Placement, TheUsageItIsGivenDecides) {
  const auto node = Hetero();
  const auto nvidia = Request({{"dxshim.io/vendor", "nvidia"}});
  const Usage first_busy = {{node.devices[0].id, {1, false, 0, 0, {}}}};
  EXPECT_EQ(Choose(node, first_busy, nvidia, Policy(4, Placement::kSpread)).devices[0].id,
            node.devices[1].id);  // least loaded
  EXPECT_EQ(Choose(node, first_busy, nvidia, Policy(4, Placement::kPack)).devices[0].id,
            node.devices[0].id);  // fill first
  const Usage first_exclusive = {{node.devices[0].id, {1, true, 0, 0, {}}}};
  const auto placed = Choose(node, first_exclusive, nvidia, Policy(4, Placement::kPack));
  EXPECT_EQ(placed.devices[0].id, node.devices[1].id);  // shared requests stay off exclusive ones
  EXPECT_EQ(placed.considered[0], "NVIDIA Tesla T4 [" + node.devices[0].location_path +
                                      "]: matches, 1/4 pods " + "(exclusive), 0B free, full");
}

TEST(Placement, EachRefusalNamesTheRequestAndThePods) {
  const auto node = Hetero();
  const auto policy = Policy(1, Placement::kSpread);
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
      {node.devices[0].id, {1, false, 0, 1, {{"default/a", std::nullopt, false}}}},
      {node.devices[1].id, {1, true, 0, 0, {{"default/b", 1ull << 30, true}}}}};
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

}  // namespace
}  // namespace dxshim::devices
