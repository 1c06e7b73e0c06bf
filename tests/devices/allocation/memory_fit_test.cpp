// The largest fit (devices/allocation/memory_fit.h): the most one more shared pod can reserve on
// a single GPU, which is what dxshim's memory resource offers the scheduler. Free memory split
// over GPUs is not added up; a GPU whose pod slots are taken, or held exclusively, or absent,
// offers nothing. Two 16Gi GPUs made here (no GPU on this machine).
#include "devices/allocation/memory_fit.h"

#include <gtest/gtest.h>

namespace dxshim::devices {
namespace {

constexpr std::uint64_t kGi = 1ull << 30;

Inventory TwoGpus() {
  Inventory inv;
  for (const char* id : {"a", "b"}) {
    Device d;
    d.id = id;
    d.description = std::string("GPU ") + id;
    d.location_path = std::string("PCIROOT(0)#PCI(") + id + ")";
    d.dedicated_memory = 16 * kGi;
    inv.devices.push_back(d);
  }
  return inv;
}

AllocationPolicy Policy(unsigned per_device) {
  AllocationPolicy p;
  p.max_containers_per_device = per_device;
  return p;
}

DeviceUsage Holding(std::uint64_t bytes, unsigned pods = 1) {
  DeviceUsage u;
  u.pods = pods;
  u.memory = bytes;
  return u;
}

TEST(LargestFit, IsTheMostFreeOnOneGpuNotTheSum) {
  const auto node = TwoGpus();
  const Usage usage = {{"a", Holding(10 * kGi)}, {"b", Holding(10 * kGi)}};
  const auto fit = FindLargestFit(node, usage, Policy(4));
  EXPECT_EQ(fit.bytes, 6 * kGi);  // 12Gi free on the node, 6Gi on either GPU
  ASSERT_NE(fit.device, nullptr);
  EXPECT_EQ(fit.device->id, "a");  // ties: inventory order
}

TEST(LargestFit, AGpuWithoutAPodSlotOffersNothing) {
  const auto node = TwoGpus();
  // The defaults: one pod per GPU. One 6Gi pod on each GPU leaves 10Gi free on each, no slot.
  EXPECT_EQ(
      FindLargestFit(node, {{"a", Holding(6 * kGi)}, {"b", Holding(6 * kGi)}}, Policy(1)).bytes,
      0u);
  const auto one = FindLargestFit(node, {{"a", Holding(6 * kGi)}}, Policy(1));
  EXPECT_EQ(one.bytes, 16 * kGi);
  EXPECT_EQ(one.device->id, "b");
}

TEST(LargestFit, ExclusiveAndAbsentGpusOfferNothing) {
  auto node = TwoGpus();
  DeviceUsage exclusive;
  exclusive.pods = 1;
  exclusive.exclusive = true;
  node.devices[1].present = false;
  const auto fit = FindLargestFit(node, {{"a", exclusive}}, Policy(8));
  EXPECT_EQ(fit.bytes, 0u);
  EXPECT_EQ(fit.device, nullptr);
}

TEST(LargestFit, FreeUnitsByGpuNamesUnitsAndSlots) {
  const auto node = TwoGpus();
  EXPECT_EQ(FreeUnitsByGpu(node, {{"a", Holding(10 * kGi, 2)}}, Policy(2), kGi),
            "GPU a [PCIROOT(0)#PCI(a)]: 6 units free, 0 of 2 pod slots free; "
            "GPU b [PCIROOT(0)#PCI(b)]: 16 units free, 2 of 2 pod slots free");
}

}  // namespace
}  // namespace dxshim::devices
