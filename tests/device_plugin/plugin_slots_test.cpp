// What the device plugin advertises: one slot per pod a GPU may hold, ids stable and valid as
// kubelet device ids, and a GPU that vanishes keeps its slots as Unhealthy.
#include "shim/device_plugin/plugin_slots.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "devices/allocation/device_request.h"
#include "shim/base/comma_list.h"

namespace dxshim::device_plugin {
namespace {

devices::Inventory Node(std::initializer_list<const char*> ids) {
  devices::Inventory inventory;
  for (const char* id : ids) {
    devices::Device d;
    d.id = id;
    inventory.devices.push_back(d);
  }
  return inventory;
}

TEST(PluginSlots, OneSlotPerPodAGpuMayHold) {
  PluginSlots slots(3);
  const auto list = slots.For(Node({"0000:01:00.0", "0000:02:00.0"}));
  ASSERT_EQ(list.size(), 6u);
  std::set<std::string> ids;
  for (const auto& s : list) {
    EXPECT_TRUE(s.healthy);
    EXPECT_TRUE(slots.Known(s.id));
    ids.insert(s.id);
  }
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_FALSE(slots.Known("gpu-00000000-0"));
  // The ids are what the annotation that carries them accepts.
  const std::string joined = JoinCommaList(ids);
  EXPECT_EQ(devices::CountPluginSlots(joined), 6u);
}

TEST(PluginSlots, IdsAreStableAndShortForLongPnpIds) {
  const std::string pnp =
      "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\4&2B8D0FB5&0&0018&SOMETHING-LONGER";
  const auto id = PluginSlots::SlotId(pnp, 1);
  EXPECT_EQ(id, PluginSlots::SlotId(pnp, 1));
  EXPECT_NE(id, PluginSlots::SlotId(pnp, 0));
  EXPECT_LE(id.size(), 63u);
  EXPECT_TRUE(id.starts_with("gpu-")) << id;
}

TEST(PluginSlots, AVanishedOrAbsentGpuKeepsItsSlotsAsUnhealthy) {
  PluginSlots slots(2);
  const auto both = slots.For(Node({"a", "b"}));
  const auto one = slots.For(Node({"a"}));
  ASSERT_EQ(one.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(one[i].id, both[i].id);
    EXPECT_EQ(one[i].healthy, one[i].gpu_id == "a") << one[i].id;
  }
  auto absent = Node({"a", "b"});
  absent.devices[1].present = false;
  const auto marked = slots.For(absent);
  EXPECT_TRUE(marked[0].healthy);
  EXPECT_FALSE(marked[3].healthy);
  EXPECT_EQ(slots.For(Node({"a", "b"})), both);
}

RecordedContainer Holder(const std::string& sandbox, std::vector<std::string> gpus,
                         std::vector<std::string> slots = {}, bool exclusive = false,
                         bool exited = false) {
  RecordedContainer c;
  c.container_id = sandbox + "-c" + std::to_string(slots.size());
  c.sandbox_id = sandbox;
  c.device_ids = std::move(gpus);
  c.plugin_slots = std::move(slots);
  c.exclusive = exclusive;
  c.exited = exited;
  return c;
}

TEST(SchedulerGap, CountsWhatPodsHoldBeyondTheirPluginSlots) {
  RuntimeRecord record;
  record.ready_sandboxes = {"by-limit", "by-annotation", "exclusive", "two-containers"};
  record.containers = {
      Holder("by-limit", {"a"}, {"gpu-1-0"}),           // counted by the scheduler: 0 unseen
      Holder("by-annotation", {"a"}),                   // 1 unseen
      Holder("exclusive", {"b"}, {"gpu-2-0"}, true),    // 3 slots of b, 1 counted: 2 unseen
      Holder("two-containers", {"c"}, {"gpu-3-0"}),     // two slots for one GPU held once:
      Holder("two-containers", {"c"}, {"gpu-3-1"}),     // 1 counted too many
      Holder("gone", {"c"}, {"gpu-3-2"}, false, true),  // exited, sandbox not ready: holds nothing
  };
  const auto node = Node({"a", "b", "c"});
  const auto gap = FindSchedulerGap(record, 3, node);
  EXPECT_EQ(gap.unseen, 1u + 2u - 1u);
  EXPECT_EQ(gap.counted, (std::set<std::string>{"gpu-1-0", "gpu-2-0", "gpu-3-0", "gpu-3-1"}));
  record.containers.resize(2);
  record.containers[1].plugin_slots = {"gpu-9-0"};
  EXPECT_EQ(FindSchedulerGap(record, 3, node).unseen, 0u);
}

// A hold on a GPU this node does not have takes no slot (a replaced GPU, a changed inventory,
// labels another tool wrote); one GPU never takes more than its slots; an absent GPU's slots
// are Unhealthy already and are not counted again.
TEST(SchedulerGap, CountsOnlyHoldsOnThisNodesPresentGpusEachUpToItsSlots) {
  RuntimeRecord record;
  record.ready_sandboxes = {"elsewhere", "here-1", "here-2", "here-3", "limit-elsewhere"};
  record.containers = {Holder("elsewhere", {"replaced-gpu"})};
  const auto one_gpu = Node({"a"});
  EXPECT_EQ(FindSchedulerGap(record, 1, one_gpu).unseen, 0u);
  record.containers.push_back(Holder("here-1", {"a", "replaced-gpu"}));
  EXPECT_EQ(FindSchedulerGap(record, 1, one_gpu).unseen, 1u);
  // Three annotation pods on a GPU of 2 slots (possible after max-containers-per-device was
  // lowered): 2, not 3.
  record.containers.push_back(Holder("here-2", {"a"}));
  record.containers.push_back(Holder("here-3", {"a"}));
  EXPECT_EQ(FindSchedulerGap(record, 2, one_gpu).unseen, 2u);
  // A limit pod (its slot counted by the scheduler) whose GPU is not here: its slot does not
  // lower the count of the others, and stays healthy.
  record.containers.push_back(Holder("limit-elsewhere", {"replaced-gpu"}, {"gpu-7-0"}));
  const auto gap = FindSchedulerGap(record, 2, one_gpu);
  EXPECT_EQ(gap.unseen, 2u);
  EXPECT_TRUE(gap.counted.contains("gpu-7-0"));
  auto absent = one_gpu;
  absent.devices[0].present = false;
  EXPECT_EQ(FindSchedulerGap(record, 2, absent).unseen, 0u);
}

TEST(SchedulerGap, MarksUnseenSlotsUnhealthyButNeverACountedOne) {
  PluginSlots slots(2);
  const auto node = Node({"a", "b"});
  const auto all = slots.For(node);
  SchedulerGap gap;
  gap.unseen = 2;
  gap.counted = {all[3].id};  // the last slot is a pod's: it stays healthy
  const auto marked = slots.For(node, gap);
  EXPECT_TRUE(marked[0].healthy);
  EXPECT_FALSE(marked[1].healthy);
  EXPECT_FALSE(marked[2].healthy);
  EXPECT_TRUE(marked[3].healthy);
  gap.unseen = 10;  // more than there is: every uncounted slot
  const auto full = slots.For(node, gap);
  EXPECT_EQ(
      std::count_if(full.begin(), full.end(), [](const PluginDevice& s) { return s.healthy; }), 1);
}

TEST(PluginSlotsAnnotation, BadValuesAreErrorsNamingTheAnnotation) {
  for (const char* bad : {"", "gpu-1,", "gpu-1,gpu-1", "GPU-1", "gpu 1", "../x"}) {
    try {
      devices::CountPluginSlots(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const devices::RequestError& e) {
      EXPECT_NE(std::string(e.what()).find("dxshim.io/plugin-slots"), std::string::npos);
    }
  }
  std::string many;
  for (int i = 0; i < 17; ++i) many += (i ? ",gpu-" : "gpu-") + std::to_string(i);
  EXPECT_THROW(devices::CountPluginSlots(many), devices::RequestError);
}

// A slot given twice to one container is refused (found by
// tests/fuzz/device_plugin_allocate_fuzz.cpp): Allocate answered with an annotation naming it
// twice, which CreateContainer then refused (CountPluginSlots: "is repeated"), after admission.
TEST(PluginSlots, ASlotGivenTwiceToOneContainerIsRefused) {
  PluginSlots slots(2);
  const auto list = slots.For(Node({"0000:01:00.0"}));
  EXPECT_EQ(slots.Refusal({list[0].id, list[1].id}), "");
  EXPECT_EQ(slots.Refusal({list[0].id, list[1].id, list[0].id}),
            "'" + list[0].id + "' is given twice to one container");
}

}  // namespace
}  // namespace dxshim::device_plugin
