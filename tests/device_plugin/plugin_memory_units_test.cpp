// The memory resource the device plugin advertises: one unit per gpu-memory-unit of each GPU's
// capacity, ids stable and valid as kubelet device ids, a GPU that vanishes keeps its units as
// Unhealthy, and the units pods hold outside the scheduler's count are marked Unhealthy.
#include "shim/device_plugin/plugin_memory_units.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "devices/allocation/device_request.h"
#include "shim/device_plugin/plugin_slots.h"

namespace dxshim::device_plugin {
namespace {

constexpr std::uint64_t kGi = 1ull << 30;
constexpr std::uint64_t kMi = 1ull << 20;

devices::Inventory Node(std::initializer_list<std::pair<const char*, std::uint64_t>> gpus) {
  devices::Inventory inventory;
  for (const auto& [id, memory] : gpus) {
    devices::Device d;
    d.id = id;
    d.dedicated_memory = memory;
    inventory.devices.push_back(d);
  }
  return inventory;
}

devices::AllocationPolicy Policy(unsigned max_per_device = 8) {
  devices::AllocationPolicy policy;
  policy.max_containers_per_device = max_per_device;
  return policy;
}

std::size_t Healthy(const std::vector<PluginDevice>& devices) {
  return static_cast<std::size_t>(std::count_if(devices.begin(), devices.end(),
                                                [](const PluginDevice& d) { return d.healthy; }));
}

TEST(PluginMemoryUnits, OneUnitPerGpuMemoryUnitOfEachGpusCapacity) {
  PluginMemoryUnits units(Policy());
  const auto list = units.For(Node({{"0000:01:00.0", 16 * kGi}, {"0000:02:00.0", 16 * kGi}}));
  ASSERT_EQ(list.size(), 32u);  // two 16 GiB GPUs at 1Gi
  std::set<std::string> ids;
  for (const auto& u : list) {
    EXPECT_TRUE(u.healthy);
    EXPECT_TRUE(units.Known(u.id));
    EXPECT_TRUE(u.id.starts_with("mem-")) << u.id;
    ids.insert(u.id);
  }
  EXPECT_EQ(ids.size(), 32u);
  EXPECT_FALSE(units.Known(PluginSlots::SlotId("0000:01:00.0", 0)));
  // The ids are what the annotation that carries them accepts.
  std::string joined;
  for (const auto& id : ids) joined += (joined.empty() ? "" : ",") + id;
  EXPECT_EQ(devices::CountPluginMemoryUnits(joined), 32u);

  // Capacity is the dedicated memory less what the host keeps, rounded down to whole units.
  auto policy = Policy();
  policy.gpu_memory_reserved = 1 * kGi;
  policy.gpu_memory_unit = 2 * kGi;
  PluginMemoryUnits coarse(policy);
  EXPECT_EQ(coarse.For(Node({{"a", 16 * kGi}, {"b", 8 * kGi}, {"c", 512 * kMi}})).size(),
            7u + 3u + 0u);
}

TEST(PluginMemoryUnits, IdsAreStableShortAndNotTheSlots) {
  const std::string pnp =
      "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\4&2B8D0FB5&0&0018&SOMETHING-LONGER";
  const auto id = PluginMemoryUnits::UnitId(pnp, 1048575);
  EXPECT_EQ(id, PluginMemoryUnits::UnitId(pnp, 1048575));
  EXPECT_NE(id, PluginMemoryUnits::UnitId(pnp, 0));
  EXPECT_NE(PluginMemoryUnits::UnitId(pnp, 0), PluginSlots::SlotId(pnp, 0));
  EXPECT_LE(id.size(), 63u);
  EXPECT_EQ(devices::CountPluginMemoryUnits(id), 1u) << id;
}

TEST(PluginMemoryUnits, AVanishedAbsentOrShrunkGpuKeepsItsUnitsAsUnhealthy) {
  PluginMemoryUnits units(Policy());
  const auto both = units.For(Node({{"a", 2 * kGi}, {"b", 4 * kGi}}));
  ASSERT_EQ(both.size(), 6u);
  const auto one = units.For(Node({{"a", 2 * kGi}}));
  ASSERT_EQ(one.size(), 6u);
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].id, both[i].id);
    EXPECT_EQ(one[i].healthy, one[i].gpu_id == "a") << one[i].id;
  }
  auto absent = Node({{"a", 2 * kGi}, {"b", 4 * kGi}});
  absent.devices[1].present = false;
  EXPECT_EQ(Healthy(units.For(absent)), 2u);
  // Less memory than before (another inventory): the units it no longer has stay, Unhealthy.
  const auto shrunk = units.For(Node({{"a", 2 * kGi}, {"b", 1 * kGi}}));
  ASSERT_EQ(shrunk.size(), 6u);
  EXPECT_EQ(Healthy(shrunk), 3u);
  EXPECT_EQ(units.For(Node({{"a", 2 * kGi}, {"b", 4 * kGi}})), both);
}

RecordedContainer Holder(const std::string& sandbox, std::vector<std::string> gpus,
                         std::vector<std::uint64_t> memory, std::vector<std::string> units = {},
                         bool exclusive = false, bool exited = false) {
  RecordedContainer c;
  c.container_id = sandbox + "-c" + std::to_string(units.size());
  c.sandbox_id = sandbox;
  c.device_ids = std::move(gpus);
  c.memory = std::move(memory);
  c.plugin_memory_units = std::move(units);
  c.exclusive = exclusive;
  c.exited = exited;
  return c;
}

std::vector<std::string> Units(const std::string& pod, unsigned n) {
  std::vector<std::string> out;
  for (unsigned i = 0; i < n; ++i) out.push_back("mem-" + pod + "-" + std::to_string(i));
  return out;
}

TEST(MemoryGap, CountsWhatPodsHoldBeyondTheirMemoryUnits) {
  const auto node = Node({{"a", 16 * kGi}, {"b", 16 * kGi}, {"c", 16 * kGi}});
  const auto policy = Policy(8);  // the default reservation: 16Gi / 8 = 2Gi
  RuntimeRecord record;
  record.ready_sandboxes = {"by-limit", "by-annotation", "default", "small", "two-gpus"};
  record.containers = {
      Holder("by-limit", {"a"}, {6 * kGi}, Units("1", 6)),           // counted by the scheduler: 0
      Holder("by-annotation", {"a"}, {6 * kGi}),                     // 6 unseen
      Holder("default", {"b"}, {}),                                  // no label: the default, 2
      Holder("small", {"b"}, {512 * kMi}),                           // rounded up: 1
      Holder("two-gpus", {"b", "c"}, {3 * kGi, 1 * kGi}),            // 3 + 1
      Holder("gone", {"c"}, {8 * kGi}, Units("9", 8), false, true),  // exited, not ready: none
  };
  auto gap = FindMemoryGap(record, policy, node);
  EXPECT_EQ(gap.unseen, 6u + 2u + 1u + 4u);
  const auto by_limit = Units("1", 6);
  EXPECT_EQ(gap.counted, (std::set<std::string>(by_limit.begin(), by_limit.end())));

  // An exclusive pod takes its GPU's whole capacity (the scheduler counted 1 unit of it).
  record.ready_sandboxes.insert("exclusive");
  record.containers.push_back(Holder("exclusive", {"c"}, {}, Units("2", 1), true));
  gap = FindMemoryGap(record, policy, node);
  EXPECT_EQ(gap.unseen, 6u + 2u + 1u + 3u + 16u - 1u);  // c: at most its 16 units
}

// A pod holds each GPU once: two containers that each brought units for one GPU held once make up
// for another pod's unseen units; the gap never goes below zero.
TEST(MemoryGap, ContainersOfOnePodHoldTheirGpuOnceAndTheGapNeverGoesNegative) {
  const auto node = Node({{"a", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"two-containers", "by-annotation"};
  record.containers = {
      Holder("two-containers", {"a"}, {4 * kGi}, Units("1", 4)),
      Holder("two-containers", {"a"}, {4 * kGi}, Units("2", 4)),  // 4 counted too many
      Holder("by-annotation", {"a"}, {3 * kGi}),
  };
  EXPECT_EQ(FindMemoryGap(record, Policy(), node).unseen, 0u);
  record.containers[2].memory = {6 * kGi};
  EXPECT_EQ(FindMemoryGap(record, Policy(), node).unseen, 2u);
  record.containers.pop_back();
  EXPECT_EQ(FindMemoryGap(record, Policy(), node).unseen, 0u);
}

// A hold on a GPU this node does not have takes no unit; one GPU never counts for more than its
// units; an absent GPU's units are Unhealthy already and are not counted again.
TEST(MemoryGap, CountsOnlyHoldsOnThisNodesPresentGpusEachUpToItsUnits) {
  const auto node = Node({{"a", 4 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"elsewhere", "here-1", "here-2", "limit-elsewhere"};
  record.containers = {Holder("elsewhere", {"replaced-gpu"}, {2 * kGi})};
  EXPECT_EQ(FindMemoryGap(record, Policy(), node).unseen, 0u);
  record.containers.push_back(Holder("here-1", {"a", "replaced-gpu"}, {3 * kGi}));
  EXPECT_EQ(FindMemoryGap(record, Policy(), node).unseen, 3u);
  record.containers.push_back(Holder("here-2", {"a"}, {3 * kGi}));  // 6 held, 4 to have
  EXPECT_EQ(FindMemoryGap(record, Policy(), node).unseen, 4u);
  // A limit pod (its units counted by the scheduler) whose GPU is not here: its units do not
  // lower the count of the others, and stay healthy.
  record.containers.push_back(
      Holder("limit-elsewhere", {"replaced-gpu"}, {2 * kGi}, Units("7", 2)));
  const auto gap = FindMemoryGap(record, Policy(), node);
  EXPECT_EQ(gap.unseen, 4u);
  EXPECT_TRUE(gap.counted.contains("mem-7-0"));
  auto absent = node;
  absent.devices[0].present = false;
  EXPECT_EQ(FindMemoryGap(record, Policy(), absent).unseen, 0u);
}

TEST(MemoryGap, MarksUnseenUnitsUnhealthyButNeverACountedOne) {
  PluginMemoryUnits units(Policy());
  const auto node = Node({{"a", 2 * kGi}, {"b", 2 * kGi}});
  const auto all = units.For(node);
  SchedulerGap gap;
  gap.unseen = 2;
  gap.counted = {all[3].id};  // the last unit is a pod's: it stays healthy
  const auto marked = units.For(node, gap);
  EXPECT_TRUE(marked[0].healthy);
  EXPECT_FALSE(marked[1].healthy);
  EXPECT_FALSE(marked[2].healthy);
  EXPECT_TRUE(marked[3].healthy);
  gap.unseen = 10;  // more than there is: every uncounted unit
  EXPECT_EQ(Healthy(units.For(node, gap)), 1u);
}

// What the service calls: the gap worked out from the record, and the units marked by it.
TEST(MemoryGap, AdvertisedTakesAnAnnotationPodsUnitsOutOfTheHealthyCount) {
  PluginMemoryUnits units(Policy());
  const auto node = Node({{"a", 16 * kGi}});
  RuntimeRecord record;
  SchedulerGap gap;
  EXPECT_EQ(Healthy(units.Advertised(node, record, gap)), 16u);
  record.ready_sandboxes = {"by-annotation"};
  record.containers = {Holder("by-annotation", {"a"}, {6 * kGi})};
  EXPECT_EQ(Healthy(units.Advertised(node, record, gap)), 10u);
  EXPECT_EQ(gap.unseen, 6u);
  EXPECT_STREQ(units.annotation(), "dxshim.io/plugin-memory-units");
}

}  // namespace
}  // namespace dxshim::device_plugin
