// The memory resource the device plugin advertises: one unit per gpu-memory-unit of each GPU's
// capacity, ids stable and valid as kubelet device ids, a GPU that vanishes keeps its units as
// Unhealthy, and the units pods hold outside the scheduler's count are marked Unhealthy.
#include "shim/device_plugin/plugin_memory_units.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "devices/allocation/device_request.h"
#include "devices/allocation/gpu_memory.h"
#include "shim/base/comma_list.h"
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

// A count that offers every unit there is.
MemoryCount All() {
  MemoryCount count;
  count.fit_units = 1000;
  return count;
}

TEST(PluginMemoryUnits, OneUnitPerGpuMemoryUnitOfEachGpusCapacity) {
  PluginMemoryUnits units(Policy());
  const auto list =
      units.For(Node({{"0000:01:00.0", 16 * kGi}, {"0000:02:00.0", 16 * kGi}}), All());
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
  const std::string joined = JoinCommaList(ids);
  EXPECT_EQ(devices::CountPluginMemoryUnits(joined), 32u);

  // Capacity is the dedicated memory less what the host keeps, rounded down to whole units.
  auto policy = Policy();
  policy.gpu_memory_reserved = 1 * kGi;
  policy.gpu_memory_unit = 2 * kGi;
  PluginMemoryUnits coarse(policy);
  EXPECT_EQ(coarse.For(Node({{"a", 16 * kGi}, {"b", 8 * kGi}, {"c", 512 * kMi}}), All()).size(),
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
  const auto both = units.For(Node({{"a", 2 * kGi}, {"b", 4 * kGi}}), All());
  ASSERT_EQ(both.size(), 6u);
  const auto one = units.For(Node({{"a", 2 * kGi}}), All());
  ASSERT_EQ(one.size(), 6u);
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].id, both[i].id);
    EXPECT_EQ(one[i].healthy, one[i].gpu_id == "a") << one[i].id;
  }
  auto absent = Node({{"a", 2 * kGi}, {"b", 4 * kGi}});
  absent.devices[1].present = false;
  EXPECT_EQ(Healthy(units.For(absent, All())), 2u);
  // Less memory than before (another inventory): the units it no longer has stay, Unhealthy.
  const auto shrunk = units.For(Node({{"a", 2 * kGi}, {"b", 1 * kGi}}), All());
  ASSERT_EQ(shrunk.size(), 6u);
  EXPECT_EQ(Healthy(shrunk), 3u);
  EXPECT_EQ(units.For(Node({{"a", 2 * kGi}, {"b", 4 * kGi}}), All()), both);
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

install::PodDeviceEntry Entry(const std::string& uid, const std::string& container,
                              std::vector<std::string> ids) {
  return {uid, container, "dxshim.io/gpu-memory", std::move(ids)};
}

// The defaults: one pod per GPU. A 6-unit pod on the only GPU leaves 10Gi free and no pod slot:
// nothing more is offered (the node-wide count offered 10 more units, which the next pod was then
// refused at CreateContainer).
TEST(CountMemory, TheDefaultOnePodPerGpuOffersNothingOnceAPodHoldsIt) {
  const auto node = Node({{"a", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"pod-a"};
  record.containers = {Holder("pod-a", {"a"}, {6 * kGi}, Units("1", 6))};
  const auto count = CountMemory(record, node, Policy(1), {}, {});
  EXPECT_EQ(count.fit_units, 0u);
  EXPECT_EQ(count.allocated.size(), 6u);
  EXPECT_EQ(CountMemory({}, node, Policy(1), {}, {}).fit_units, 16u);
}

// Two 16Gi GPUs with a 10Gi pod each: 12Gi free on the node, 6 on either GPU; 6 is offered.
TEST(CountMemory, SplitFreeMemoryOffersTheLargestFitNotTheSum) {
  const auto node = Node({{"a", 16 * kGi}, {"b", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"p1", "p2"};
  record.containers = {Holder("p1", {"a"}, {10 * kGi}, Units("1", 10)),
                       Holder("p2", {"b"}, {10 * kGi}, Units("2", 10))};
  const auto count = CountMemory(record, node, Policy(4), {}, {});
  EXPECT_EQ(count.fit_units, 6u);
  EXPECT_EQ(count.fit_gpu, "a");
  EXPECT_EQ(count.allocated.size(), 20u);
}

// Memory the scheduler never counted (an annotation pod, the default of a pod that named no
// amount, rounded up never; an exclusive pod's whole GPU) leaves that GPU's fit, and an
// exclusive GPU offers nothing.
TEST(CountMemory, PodsOutsideTheSchedulersCountLowerTheirGpusFit) {
  const auto node = Node({{"a", 16 * kGi}, {"b", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"by-annotation", "default"};
  record.containers = {Holder("by-annotation", {"a"}, {6 * kGi}), Holder("default", {"b"}, {})};
  // b: the default reservation, 16Gi / 8 = 2Gi; a: 6Gi; the largest fit is b's 14.
  EXPECT_EQ(CountMemory(record, node, Policy(8), {}, {}).fit_units, 14u);
  record.ready_sandboxes.insert("exclusive");
  record.containers.push_back(Holder("exclusive", {"b"}, {}, {}, true));
  const auto count = CountMemory(record, node, Policy(8), {}, {});
  EXPECT_EQ(count.fit_units, 10u);
  EXPECT_EQ(count.fit_gpu, "a");
  EXPECT_TRUE(count.allocated.empty());
}

// A pod kubelet allocated units to whose containers do not exist yet (its image is still
// pulling): its units stay allocated and it is placed as dxshim would place it, taking memory and
// a pod slot. An init container's units that its app container reuses count once.
TEST(CountMemory, PodsNotStartedYetArePlacedWithTheirMemoryAndSlot) {
  const auto node = Node({{"a", 16 * kGi}, {"b", 16 * kGi}});
  const std::vector<install::PodDeviceEntry> kubelet = {
      Entry("uid-1", "init", Units("1", 2)),
      Entry("uid-1", "app", Units("1", 6)),  // the init's 2, and 4 more
  };
  RuntimeRecord record;  // its sandbox is ready (kubelet pulls images after RunPodSandbox)
  record.ready_sandboxes = {"s1"};
  record.pod_uids = {{"s1", "uid-1"}};
  const auto count = CountMemory(record, node, Policy(1), kubelet, {});
  EXPECT_EQ(count.allocated.size(), 6u);
  EXPECT_EQ(count.fit_units, 16u);  // the pod is placed on a GPU, whose slot it takes
  const auto one = Node({{"a", 16 * kGi}});
  EXPECT_EQ(CountMemory(record, one, Policy(1), kubelet, {}).fit_units, 0u);
  EXPECT_EQ(CountMemory(record, one, Policy(2), kubelet, {}).fit_units, 10u);
  // Every unit just answered, no sandbox yet: the same. One of them only (kubelet handed a unit
  // of a gone pod to another): the pod is gone.
  const auto six = Units("1", 6);
  EXPECT_EQ(CountMemory({}, one, Policy(2), kubelet, {{six.begin(), six.end()}}).fit_units, 10u);
  EXPECT_EQ(CountMemory({}, one, Policy(2), kubelet, {{six[0]}}).fit_units, 15u);
  // No ready sandbox and not just answered: the pod is gone; kubelet frees its units before it
  // counts at its next admission, and so does the count.
  record.ready_sandboxes.clear();
  const auto gone = CountMemory(record, one, Policy(1), kubelet, {});
  EXPECT_EQ(gone.fit_units, 16u);
  EXPECT_TRUE(gone.allocated.empty());
}

// A started pod whose next container kubelet allocated more units: its GPU has that much less.
TEST(CountMemory, AStartedPodsOtherContainersGrowItsHold) {
  const auto node = Node({{"a", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"p"};
  record.containers = {Holder("p", {"a"}, {4 * kGi}, Units("1", 4))};
  auto second = Units("2", 4);
  const std::vector<install::PodDeviceEntry> kubelet = {Entry("uid-p", "first", Units("1", 4)),
                                                        Entry("uid-p", "second", second)};
  const auto count = CountMemory(record, node, Policy(4), kubelet, {});
  EXPECT_EQ(count.fit_units, 8u);  // 16 - 4 held - 4 of its next container
  EXPECT_EQ(count.allocated.size(), 8u);
}

// An Allocate answer kubelet has not checkpointed yet may be one container of a pod whose other
// containers kubelet is still allocating: it takes memory, not a pod slot.
TEST(CountMemory, AnAnswerNotCheckpointedTakesMemoryNotASlot) {
  const auto node = Node({{"a", 16 * kGi}});
  const auto count = CountMemory({}, node, Policy(1), {}, {{"x-0", "x-1", "x-2"}});
  EXPECT_EQ(count.fit_units, 13u);
  EXPECT_EQ(count.allocated.size(), 3u);
}

// The units kubelet allocated stay healthy wherever they are in the list; of the others exactly
// the largest fit is healthy, those of the GPU it is on first.
TEST(PluginMemoryUnits, HealthyIsAllocatedPlusTheLargestFitAndNeverAnAllocatedUnitMarked) {
  PluginMemoryUnits units(Policy(4));
  const auto node = Node({{"a", 4 * kGi}, {"b", 4 * kGi}});
  MemoryCount count;
  count.allocated = {PluginMemoryUnits::UnitId("b", 3), PluginMemoryUnits::UnitId("a", 0)};
  count.fit_units = 2;
  count.fit_gpu = "b";
  const auto list = units.For(node, count);
  ASSERT_EQ(list.size(), 8u);
  EXPECT_EQ(Healthy(list), 4u);
  for (const auto& u : list) {
    const bool want =
        u.id == PluginMemoryUnits::UnitId("a", 0) || u.id == PluginMemoryUnits::UnitId("b", 0) ||
        u.id == PluginMemoryUnits::UnitId("b", 1) || u.id == PluginMemoryUnits::UnitId("b", 3);
    EXPECT_EQ(u.healthy, want) << u.id;
  }
}

// What kubelet is told through the resource: GetPreferredAllocation prefers the units of the GPU
// with the largest fit, kubelet's must-include ones first; Allocate refuses units no single GPU
// can hold, naming each GPU's free units and pod slots.
TEST(PluginMemoryUnits, PrefersTheLargestFitsUnitsAndRefusesWhatFitsNoGpu) {
  PluginMemoryUnits units(Policy(2));
  const auto node = Node({{"a", 16 * kGi}, {"b", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"p"};
  const auto a = [](unsigned n) { return PluginMemoryUnits::UnitId("a", n); };
  const auto b = [](unsigned n) { return PluginMemoryUnits::UnitId("b", n); };
  std::vector<std::string> held;
  for (unsigned n = 0; n < 12; ++n) held.push_back(b(n));
  record.containers = {Holder("p", {"a"}, {12 * kGi}, held)};
  SchedulerGap gap;
  const auto list = units.Advertised(node, record, gap);
  EXPECT_EQ(Healthy(list), 12u + 16u);
  EXPECT_EQ(units.Preferred({a(12), b(12), a(13)}, {b(12)}, 2),
            (std::vector<std::string>{b(12), a(12)}));
  EXPECT_EQ(units.Refusal({b(13), b(14)}), "");
  // Found by tests/fuzz/device_plugin_allocate_fuzz.cpp: a unit given twice was answered (and
  // counted twice against the fit), and CreateContainer then refused the annotation.
  EXPECT_EQ(units.Refusal({b(13), b(14), b(13)}),
            "'" + b(13) + "' is given twice to one container");
  std::vector<std::string> seventeen;
  for (unsigned n = 0; n < 17; ++n) seventeen.push_back(a(n));
  EXPECT_EQ(units.Refusal(seventeen),
            "17 memory units (17Gi) fit on no single GPU of this node, and a container's GPU "
            "memory must:  []: 4 units free, 1 of 2 pod slots free;  []: 16 units free, 2 of "
            "2 pod slots free");
}

// A pod not started that asked for two GPUs by the slot resource is placed over two GPUs, half its
// memory on each, a pod slot on each.
TEST(CountMemory, APodNotStartedOfTwoGpusIsPlacedOnTwo) {
  const auto node = Node({{"a", 16 * kGi}, {"b", 16 * kGi}, {"c", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"s1"};
  record.pod_uids = {{"s1", "uid-1"}};
  const std::vector<install::PodDeviceEntry> kubelet = {Entry("uid-1", "app", Units("1", 12))};
  EXPECT_EQ(CountMemory(record, node, Policy(1), kubelet, {}, {{"uid-1", 2}}).fit_units, 16u);
  EXPECT_EQ(CountMemory(record, node, Policy(4), kubelet, {}, {{"uid-1", 2}}).fit_units, 16u);
  const auto two = Node({{"a", 16 * kGi}, {"b", 16 * kGi}});
  EXPECT_EQ(CountMemory(record, two, Policy(1), kubelet, {}, {{"uid-1", 2}}).fit_units, 0u);
  EXPECT_EQ(CountMemory(record, two, Policy(4), kubelet, {}, {{"uid-1", 2}}).fit_units, 10u);
}

// A started pod's next container grows it as serve's ledger does: to all its units, never below
// what it holds (here the default, 16Gi / 2 = 8Gi, more than the 4 units its next container
// brings).
TEST(CountMemory, AStartedPodGrowsToItsUnitsNeverBelowWhatItHolds) {
  const auto node = Node({{"a", 16 * kGi}});
  RuntimeRecord record;
  record.ready_sandboxes = {"p"};
  record.pod_uids = {{"p", "uid-p"}};
  record.containers = {Holder("p", {"a"}, {})};
  const std::vector<install::PodDeviceEntry> kubelet = {Entry("uid-p", "second", Units("2", 4))};
  EXPECT_EQ(CountMemory(record, node, Policy(2), kubelet, {}).fit_units, 8u);
  const std::vector<install::PodDeviceEntry> more = {Entry("uid-p", "second", Units("2", 12))};
  EXPECT_EQ(CountMemory(record, node, Policy(2), more, {}).fit_units, 4u);
}

// A unit kubelet allocated stays healthy on a GPU that is gone: kubelet keeps its allocation,
// and a unit of it marked Unhealthy would leave kubelet's free count too large.
TEST(PluginMemoryUnits, AnAllocatedUnitOfAGpuGoneStaysHealthy) {
  PluginMemoryUnits units(Policy(4));
  auto node = Node({{"a", 2 * kGi}, {"b", 2 * kGi}});
  MemoryCount count;
  count.allocated = {PluginMemoryUnits::UnitId("b", 1)};
  units.For(node, count);
  node.devices[1].present = false;
  const auto list = units.For(node, count);
  for (const auto& u : list) {
    EXPECT_EQ(u.healthy, u.id == PluginMemoryUnits::UnitId("b", 1)) << u.id;
  }
}

// Allocate's refusal counts the pods kubelet allocated that have not started (from its
// checkpoint): with one pod per GPU, a second pod is refused while the first one's sandbox is
// still pulling its image.
TEST(PluginMemoryUnits, AllocateRefusesASecondPodWhileTheFirstHasNotStarted) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "memory-refusal";
  std::filesystem::create_directories(dir);
  const auto checkpoint = (dir / "kubelet_internal_checkpoint").string();
  const auto a = [](unsigned n) { return PluginMemoryUnits::UnitId("a", n); };
  {
    std::ofstream out(checkpoint);
    out << R"({"Data":{"PodDeviceEntries":[{"PodUID":"uid-1","ContainerName":"app",)"
        << R"("ResourceName":"dxshim.io/gpu-memory","DeviceIDs":{"-1":[")" << a(0) << R"(",")"
        << a(1) << R"("]},"AllocResp":""}],"RegisteredDevices":null},"Checksum":0})";
  }
  PluginMemoryUnits units(Policy(1), checkpoint, "dxshim.io/gpu-memory", "dxshim.io/gpu");
  RuntimeRecord record;
  record.ready_sandboxes = {"s1"};
  record.pod_uids = {{"s1", "uid-1"}};
  SchedulerGap gap;
  EXPECT_EQ(Healthy(units.Advertised(Node({{"a", 16 * kGi}}), record, gap)), 2u);
  EXPECT_NE(units.Refusal({a(2)}).find("1 memory units (1Gi) fit on no single GPU"),
            std::string::npos);
  EXPECT_EQ(units.Refusal({a(0)}), "") << "a unit of the pod itself (reused) adds nothing";
}

}  // namespace
}  // namespace dxshim::device_plugin
