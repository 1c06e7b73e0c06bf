// The ledger (shim/ledger/ledger.h): reservations through the placement (matching, vendor/driver
// groups, sharing limits, spread and pack, pins), the pod (sandbox) as the unit that holds devices
// until it is gone, the resync from the runtime record without losing what happens meanwhile, and
// concurrent reservations. Devices come from the example inventories (no GPU here).
#include "shim/ledger/ledger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "devices/allocation/gpu_memory.h"
#include "devices/inventory_file.h"
#include "tests/support/ledger_reserve.h"

namespace dxshim {
namespace {

using devices::AllocationError;
using devices::AllocationPolicy;
using devices::DeviceRequest;
using devices::Inventory;
using devices::LoadInventoryFile;
using devices::ParseDeviceRequest;
using devices::SpreadOrPack;

const std::string kExamples = DXSHIM_SOURCE_DIR "/deploy/examples/inventories/";

Inventory Load(const std::string& name) {
  Inventory inv;
  inv.devices = LoadInventoryFile(kExamples + name);
  inv.generation = 1;
  return inv;
}

DeviceRequest Request(const std::map<std::string, std::string>& annotations) {
  return *ParseDeviceRequest(annotations);
}

AllocationError::Kind KindOf(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const AllocationError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no AllocationError";
  return AllocationError::Kind::kImpossible;
}

AllocationPolicy Policy(unsigned max, SpreadOrPack order = SpreadOrPack::kSpread) {
  AllocationPolicy p;
  p.max_containers_per_device = max;
  p.spread_or_pack = order;
  return p;
}

std::vector<std::string> Ids(const test::Reservation& r) {
  std::vector<std::string> out;
  for (const auto& d : r.placed.devices) out.push_back(d.id);
  return out;
}

TEST(Ledger, MatchesVendorClassMemoryAndFiles) {
  const auto node = Load("hetero-node.yaml");
  Ledger a(Policy(4));
  auto r = test::Reserve(a, node, Request({{"dxshim.io/vendor", "amd"}}), "pod-amd");
  ASSERT_EQ(r.placed.devices.size(), 1u);
  EXPECT_EQ(r.placed.devices[0].vendor, "AMD");
  r = test::Reserve(a, node, Request({{"dxshim.io/requires", "cuda"}}), "pod-cuda");
  EXPECT_EQ(r.placed.devices[0].vendor, "NVIDIA");
  std::string msg;
  EXPECT_EQ(KindOf(
                [&] {
                  test::Reserve(a, node, Request({{"dxshim.io/min-memory", "1Ti"}}), "p");
                },
                &msg),
            AllocationError::Kind::kImpossible);
  EXPECT_NE(msg.find("no GPU matches the request (gpu=1 min-memory=1048576Mi shared)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("this node has: "), std::string::npos) << msg;
  EXPECT_EQ(KindOf([&] {
              test::Reserve(a, node, Request({{"dxshim.io/class", "compute"}}), "p");
            }),
            AllocationError::Kind::kImpossible);
}

TEST(Ledger, NeverMixesVendorsOrDrivers) {
  const auto node = Load("hetero-node.yaml");  // 2 NVIDIA T4 + 1 AMD
  Ledger a(Policy(1));
  const auto r = test::Reserve(a, node, Request({{"dxshim.io/gpu", "2"}}), "pod-1");
  ASSERT_EQ(r.placed.devices.size(), 2u);
  EXPECT_EQ(r.placed.devices[0].vendor, r.placed.devices[1].vendor);
  std::string msg;
  EXPECT_EQ(KindOf(
                [&] {
                  test::Reserve(a, node, Request({{"dxshim.io/gpu", "3"}}), "pod-2");
                },
                &msg),
            AllocationError::Kind::kVendorMix);
  EXPECT_NE(msg.find("no 3 of them share one vendor and driver"), std::string::npos) << msg;
  EXPECT_EQ(KindOf(
                [&] {
                  test::Reserve(a, node, Request({{"dxshim.io/gpu", "4"}}), "pod-2");
                },
                &msg),
            AllocationError::Kind::kImpossible);
  EXPECT_NE(msg.find("only 3 GPU(s) match"), std::string::npos) << msg;
}

TEST(Ledger, SharingLimitExclusiveAndRelease) {
  const auto node = Load("nvidia-t4.yaml");
  Ledger a(Policy(2));
  const auto r1 = test::Reserve(a, node, Request({{"dxshim.io/gpu", "1"}}), "pod-1");
  const auto r2 = test::Reserve(a, node, Request({{"dxshim.io/gpu", "1"}}), "pod-2");
  std::string msg;
  EXPECT_EQ(KindOf(
                [&] {
                  test::Reserve(a, node, Request({{"dxshim.io/gpu", "1"}}), "pod-3");
                },
                &msg),
            AllocationError::Kind::kExhausted);
  EXPECT_NE(msg.find("are in use: NVIDIA Tesla T4 [PCIROOT(0)#PCI(1E00)]: 15Gi, 15Gi reserved "
                     "(pod-1 7680Mi by default, pod-2 7680Mi by default), 0B free, 2/2 pods"),
            std::string::npos)
      << msg;
  a.Commit(r1.id);
  a.Release(r2.id);  // pod-2's CreateContainer failed upstream: its share is free again
  EXPECT_EQ(a.Usage().at(r1.placed.devices[0].id).pods, 1u);
  EXPECT_EQ(KindOf([&] {
              test::Reserve(a, node, Request({{"dxshim.io/sharing", "exclusive"}}), "pod-4");
            }),
            AllocationError::Kind::kExhausted);
  a.SandboxGone("pod-1");
  EXPECT_TRUE(a.Usage().empty());
  const auto ex = test::Reserve(a, node, Request({{"dxshim.io/sharing", "exclusive"}}), "pod-4");
  a.Commit(ex.id);
  EXPECT_EQ(KindOf([&] {
              test::Reserve(a, node, Request({{"dxshim.io/sharing", "shared"}}), "pod-5");
            }),
            AllocationError::Kind::kExhausted);  // shared requests stay off exclusive devices
  a.SandboxGone("pod-4");
  EXPECT_NO_THROW(test::Reserve(a, node, Request({{"dxshim.io/gpu", "1"}}), "pod-5"));
}

TEST(Ledger, APodHoldsItsDevicesUntilItsSandboxIsGone) {
  const auto node = Load("nvidia-t4.yaml");
  Ledger a(Policy(1));
  const auto gpu = Request({{"dxshim.io/gpu", "1"}});
  // An init container, then the app container, then the app again (a crash loop): one hold.
  const auto init = test::Reserve(a, node, gpu, "pod-1");
  a.Commit(init.id);
  const auto app = test::Reserve(a, node, gpu, "pod-1");
  a.Commit(app.id);
  const auto restarted = test::Reserve(a, node, gpu, "pod-1");
  EXPECT_TRUE(restarted.placed.considered.empty());  // the pod's earlier choice, not a new one
  a.Commit(restarted.id);
  EXPECT_EQ(Ids(init), Ids(app));
  EXPECT_EQ(Ids(init), Ids(restarted));
  EXPECT_EQ(a.Usage().at(init.placed.devices[0].id).pods, 1u);
  EXPECT_EQ(KindOf([&] { test::Reserve(a, node, gpu, "pod-2"); }),
            AllocationError::Kind::kExhausted);
  // A failed attempt of the holding pod changes nothing.
  a.Release(test::Reserve(a, node, gpu, "pod-1").id);
  EXPECT_EQ(KindOf([&] { test::Reserve(a, node, gpu, "pod-2"); }),
            AllocationError::Kind::kExhausted);
  a.SandboxGone("pod-1");
  EXPECT_TRUE(a.Usage().empty());
  EXPECT_NO_THROW(test::Reserve(a, node, gpu, "pod-2"));
}

TEST(Ledger, ASandboxStoppedWithACreateInFlightKeepsNothing) {
  const auto node = Load("nvidia-t4.yaml");
  Ledger a(Policy(1));
  const auto gpu = Request({{"dxshim.io/gpu", "1"}});
  const auto r = test::Reserve(a, node, gpu, "pod-1");
  a.SandboxGone("pod-1");
  EXPECT_EQ(a.Usage().size(), 1u);  // the call in flight still counts
  a.Commit(r.id);                   // the runtime created it anyway: the pod is stopped
  EXPECT_TRUE(a.Usage().empty());
  EXPECT_NO_THROW(test::Reserve(a, node, gpu, "pod-2"));
}

TEST(Ledger, SpreadAndPackPlacement) {
  const auto node = Load("hetero-node.yaml");  // T4 #0, T4 #1 (same driver), AMD
  const auto nvidia = Request({{"dxshim.io/vendor", "nvidia"}});
  Ledger spread(Policy(4, SpreadOrPack::kSpread));
  const auto s1 = test::Reserve(spread, node, nvidia, "p1");
  const auto s2 = test::Reserve(spread, node, nvidia, "p2");
  const auto s3 = test::Reserve(spread, node, nvidia, "p3");
  EXPECT_EQ(s1.placed.devices[0].id, node.devices[0].id);  // ties: inventory order
  EXPECT_EQ(s2.placed.devices[0].id, node.devices[1].id);  // least loaded
  EXPECT_EQ(s3.placed.devices[0].id, node.devices[0].id);
  Ledger pack(Policy(2, SpreadOrPack::kPack));
  EXPECT_EQ(test::Reserve(pack, node, nvidia, "p1").placed.devices[0].id, node.devices[0].id);
  EXPECT_EQ(test::Reserve(pack, node, nvidia, "p2").placed.devices[0].id,
            node.devices[0].id);  // fill first
  EXPECT_EQ(test::Reserve(pack, node, nvidia, "p3").placed.devices[0].id,
            node.devices[1].id);  // then next
  EXPECT_NE(s1.placed.explanation.find("-> "), std::string::npos);
  EXPECT_NE(s2.placed.explanation.find("(reserves 3840Mi of 15Gi, 15Gi free and 0/4 pods before); "
                                       "spread over 2 matching GPU(s)"),
            std::string::npos)
      << s2.placed.explanation;
}

TEST(Ledger, PinsRestrictTheChoice) {
  const auto node = Load("hetero-node.yaml");
  Ledger a(Policy(1));
  const auto r =
      test::Reserve(a, node, Request({{"dxshim.io/device", node.devices[1].location_path}}), "p1");
  EXPECT_EQ(r.placed.devices[0].id, node.devices[1].id);
  EXPECT_EQ(KindOf([&] {
              test::Reserve(a, node, Request({{"dxshim.io/device", node.devices[1].id}}), "p2");
            }),
            AllocationError::Kind::kExhausted);
}

TEST(Ledger, ResyncHoldsForReadySandboxesWhateverTheirContainersDo) {
  const auto node = Load("hetero-node.yaml");  // T4 #0, T4 #1, AMD
  const auto t4a = node.devices[0].id;
  const auto t4b = node.devices[1].id;
  const auto amd = node.devices[2].id;
  Ledger a(Policy(1));
  EXPECT_FALSE(a.synced());
  a.BeginResync();
  RuntimeRecord runtime;
  runtime.ready_sandboxes = {"crash-looping", "two-containers"};
  // Ready sandbox, its only GPU container exited (crash loop, completed init container): held.
  runtime.containers.push_back(
      {"c1", "crash-looping", "app", {t4a}, false, /*exited=*/true, {}, {}, {}});
  // Not ready (stopped behind dxshim's back) and exited: free.
  runtime.containers.push_back({"c2", "stopped", "app", {t4b}, false, /*exited=*/true, {}, {}, {}});
  // Not ready (its pause process died) but a container may still run: held until it exits.
  runtime.containers.push_back(
      {"c3", "pause-died", "app", {amd}, true, /*exited=*/false, {}, {}, {}});
  // Two containers given different devices (kubelet assigns per container): the pod holds both.
  runtime.containers.push_back({"c4", "two-containers", "app", {"x"}, false, true, {}, {}, {}});
  runtime.containers.push_back({"c5", "two-containers", "app", {"y"}, false, false, {}, {}, {}});
  const auto outcome = a.FinishResync(runtime);
  EXPECT_TRUE(a.synced());
  EXPECT_EQ(outcome.holding, 3u);
  EXPECT_TRUE(outcome.freed.empty());  // nothing was held before
  const auto usage = a.Usage();
  EXPECT_EQ(usage.at(t4a).pods, 1u);
  EXPECT_EQ(usage.count(t4b), 0u);
  EXPECT_TRUE(usage.at(amd).exclusive);
  EXPECT_EQ(usage.at("x").pods, 1u);
  EXPECT_EQ(usage.at("y").pods, 1u);
  // The crash-looping pod's next attempt gets its GPU again; nobody else can take it.
  const auto gpu = Request({{"dxshim.io/vendor", "nvidia"}});
  const auto again = test::Reserve(a, node, gpu, "crash-looping");
  EXPECT_EQ(Ids(again), std::vector<std::string>{t4a});
  a.Commit(again.id);
  const auto other = test::Reserve(a, node, gpu, "newcomer");
  EXPECT_EQ(Ids(other), std::vector<std::string>{t4b});
  EXPECT_EQ(KindOf([&] { test::Reserve(a, node, gpu, "third"); }),
            AllocationError::Kind::kExhausted);
}

TEST(Ledger, ResyncKeepsHoldsOfReadySandboxesAndFreesStoppedOnes) {
  const auto node = Load("hetero-node.yaml");
  const auto t4a = node.devices[0].id;
  const auto t4b = node.devices[1].id;
  Ledger a(Policy(1));
  a.BeginResync();
  a.FinishResync({});
  const auto gpu = Request({{"dxshim.io/vendor", "nvidia"}});
  a.Commit(test::Reserve(a, node, gpu, "removed-containers").id);
  a.Commit(test::Reserve(a, node, gpu, "stopped-behind-our-back").id);
  // The first pod's containers were all removed, its sandbox is ready: it keeps its GPU. The
  // second's sandbox is not ready any more: freed, and said so.
  a.BeginResync();
  RuntimeRecord runtime;
  runtime.ready_sandboxes = {"removed-containers"};
  auto outcome = a.FinishResync(runtime);
  EXPECT_EQ(outcome.holding, 1u);
  ASSERT_EQ(outcome.freed.size(), 1u);
  EXPECT_EQ(outcome.freed[0].sandbox_id, "stopped-behind-our-back");
  EXPECT_EQ(outcome.freed[0].device_ids, std::vector<std::string>{t4b});
  EXPECT_EQ(a.Usage().count(t4a), 1u);
  EXPECT_EQ(a.Usage().count(t4b), 0u);
  // Gone from the runtime entirely: freed too.
  a.BeginResync();
  outcome = a.FinishResync({});
  EXPECT_EQ(outcome.holding, 0u);
  EXPECT_EQ(outcome.freed.size(), 1u);
  EXPECT_TRUE(a.Usage().empty());
}

TEST(Ledger, ResyncKeepsInFlightAndReplaysWhatHappenedMeanwhile) {
  const auto node = Load("hetero-node.yaml");
  const auto t4a = node.devices[0].id;
  const auto t4b = node.devices[1].id;
  Ledger a(Policy(1));
  const auto pending = test::Reserve(a, node, Request({{"dxshim.io/device", t4a}}), "pod-pending");
  const auto in_flight = test::Reserve(a, node, Request({{"dxshim.io/vendor", "amd"}}), "pod-slow");
  a.BeginResync();
  // Meanwhile: a pod's CreateContainer commits, a pod the listing shows is stopped through dxshim.
  a.Commit(pending.id);
  a.SandboxGone("pod-old");
  RuntimeRecord runtime;
  runtime.ready_sandboxes = {"pod-old", "pod-amd"};  // listed before they changed
  runtime.containers.push_back({"c-old", "pod-old", "app", {t4b}, false, false, {}, {}, {}});
  runtime.containers.push_back(
      {"c-amd", "pod-amd", "app", {"gone-device"}, true, true, {}, {}, {}});
  const auto outcome = a.FinishResync(runtime);
  EXPECT_TRUE(outcome.freed.empty());
  const auto usage = a.Usage();
  EXPECT_EQ(usage.at(t4a).pods, 1u);  // committed during the resync
  EXPECT_EQ(usage.count(t4b), 0u);    // its pod stopped during the resync
  EXPECT_EQ(usage.at(in_flight.placed.devices[0].id).pods, 1u);  // still in flight
  EXPECT_TRUE(usage.at("gone-device").exclusive);
  a.Release(in_flight.id);
  a.SandboxGone("pod-pending");
  a.SandboxGone("pod-amd");
  EXPECT_TRUE(a.Usage().empty());
}

TEST(Ledger, ConcurrentReservationsNeverOverAllocate) {
  const auto node = Load("hetero-node.yaml");  // 2 T4: 2 pods each = 4 slots
  Ledger a(Policy(2));
  std::atomic<int> granted{0};
  std::atomic<int> exhausted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&, i] {
      try {
        const auto r = test::Reserve(a, node, Request({{"dxshim.io/vendor", "nvidia"}}),
                                     "pod-" + std::to_string(i));
        a.Commit(r.id);
        ++granted;
      } catch (const AllocationError& e) {
        if (e.kind() == AllocationError::Kind::kExhausted) ++exhausted;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 4);
  EXPECT_EQ(exhausted.load(), 28);
  for (const auto& [id, u] : a.Usage()) EXPECT_EQ(u.pods, 2u) << id;
}

// Choosing reads the ledger and holds nothing: a choice made from a view that changed before it
// is held is refused when it no longer fits, or when the pod's own hold changed, and held when it
// still fits.
TEST(Ledger, AChoiceIsHeldOnlyIfItIsStillGood) {
  const auto node = Load("nvidia-t4.yaml");  // one T4, 2 pods
  Ledger a(Policy(2));
  const auto t4 = Request({{"dxshim.io/vendor", "nvidia"}});
  const auto before = a.View();
  const auto for_p1 = devices::Choose(node, before.usage, t4, a.policy());
  const auto for_p2 = devices::Choose(node, before.usage, t4, a.policy());
  const auto for_p3 = devices::Choose(node, before.usage, t4, a.policy());
  ASSERT_TRUE(a.Hold(for_p1, "p1", "default/p1", "app"));
  const auto p2 = a.Hold(for_p2, "p2", "default/p2", "app");
  ASSERT_TRUE(p2) << "chosen before p1 was held, and still fits";
  EXPECT_FALSE(a.Hold(for_p3, "p3", "default/p3", "app")) << "the last slot went to p2";
  EXPECT_EQ(a.Usage().at(node.devices[0].id).pods, 2u);
  // A choice for a pod that meanwhile holds devices of its own (another of its containers).
  EXPECT_FALSE(a.Hold(for_p1, "p1", "default/p1", "sidecar"));
  // The pod's devices again, chosen from a view in which it still held them.
  const auto p2_again = devices::Held(node, a.Usage(), "p2", a.policy());
  ASSERT_TRUE(p2_again);
  EXPECT_EQ(p2_again->source, devices::Placed::Source::kHeld);
  a.Release(*p2);  // its CreateContainer failed
  EXPECT_FALSE(a.Hold(*p2_again, "p2", "default/p2", "sidecar")) << "p2 holds nothing now";
  EXPECT_EQ(a.Usage().at(node.devices[0].id).pods, 1u);
  // Devices kubelet assigned are held whatever is in use.
  const auto assigned = devices::Assigned(node.devices, a.policy());
  ASSERT_TRUE(a.Hold(assigned, "p4", "default/p4", "app"));
  ASSERT_TRUE(a.Hold(assigned, "p5", "default/p5", "app"));
  EXPECT_EQ(a.Usage().at(node.devices[0].id).pods, 3u);
}

// GPU memory (devices/allocation/gpu_memory.h): a pod's reservation is part of its hold, rebuilt
// exactly from the runtime record's dxshim.io/gpu-memory labels (a hold without one takes the
// default as configured now), and the default keeps what a configuration admitted when only pods
// were counted.

constexpr std::uint64_t kGi = 1ull << 30;

Inventory SixteenGi() {  // one T4 made a 16Gi card
  auto node = Load("nvidia-t4.yaml");
  node.devices[0].dedicated_memory = 16 * kGi;
  return node;
}

std::unique_ptr<Ledger> Synced(const AllocationPolicy& policy, const RuntimeRecord& record = {}) {
  auto ledger = std::make_unique<Ledger>(policy);
  ledger->BeginResync();
  ledger->FinishResync(record);
  return ledger;
}

// Reserves and commits; the kind of refusal, or nullopt when admitted (and the devices in
// `chosen`).
std::optional<AllocationError::Kind> Admit(Ledger& ledger, const Inventory& node,
                                           const devices::DeviceRequest& request,
                                           const std::string& sandbox,
                                           std::string* message = nullptr,
                                           std::vector<std::string>* chosen = nullptr) {
  try {
    const auto r = test::Reserve(ledger, node, request, sandbox, "default/" + sandbox);
    ledger.Commit(r.id);
    for (const auto& d : r.placed.devices) {
      if (chosen) chosen->push_back(d.id);
    }
    return std::nullopt;
  } catch (const AllocationError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
}

TEST(LedgerMemory, TwoSixGiPodsThenTheThirdIsRefusedOnMemory) {
  const auto node = SixteenGi();
  const auto ledger = Synced(Policy(8));
  const auto six = Request({{"dxshim.io/gpu-memory", "6Gi"}});
  EXPECT_FALSE(Admit(*ledger, node, six, "a"));
  EXPECT_FALSE(Admit(*ledger, node, six, "b"));
  std::string message;
  EXPECT_EQ(Admit(*ledger, node, six, "c", &message), AllocationError::Kind::kMemoryExhausted);
  EXPECT_NE(message.find("16Gi, 12Gi reserved (default/a 6Gi, default/b 6Gi), 4Gi free, 2/8 pods"),
            std::string::npos)
      << message;
  // Another container of a holding pod reuses its hold and its memory.
  const auto again = test::Reserve(*ledger, node, six, "a");
  EXPECT_EQ(again.placed.memory, std::vector<std::uint64_t>{6 * kGi});
  ledger->Release(again.id);
  EXPECT_EQ(ledger->Usage().at(node.devices[0].id).memory, 12 * kGi);
  ledger->SandboxGone("a");
  EXPECT_FALSE(Admit(*ledger, node, six, "c"));
}

TEST(LedgerMemory, ARestartedLedgerKnowsEveryReservationFromTheRecord) {
  const auto node = SixteenGi();
  const auto& gpu = node.devices[0].id;
  RuntimeRecord record;
  record.ready_sandboxes = {"a", "b", "old"};
  record.pod_names = {{"a", "ns/a"}, {"b", "ns/b"}, {"old", "ns/old"}};
  RecordedContainer a;
  a.container_id = "ca";
  a.sandbox_id = "a";
  a.device_ids = {gpu};
  a.memory = {6 * kGi};
  auto b = a;
  b.container_id = "cb";
  b.sandbox_id = "b";
  record.containers = {a, b};
  {
    const auto ledger = Synced(Policy(8), record);
    EXPECT_FALSE(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "4Gi"}}), "c"));
    std::string message;
    EXPECT_EQ(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "1Gi"}}), "d", &message),
              AllocationError::Kind::kMemoryExhausted);
    EXPECT_NE(message.find("(default/c 4Gi, ns/a 6Gi, ns/b 6Gi)"), std::string::npos) << message;
  }
  // A hold from before memory was counted (no label) takes the default: 16Gi / 8 = 2Gi.
  RecordedContainer old = a;
  old.container_id = "cold";
  old.sandbox_id = "old";
  old.memory.clear();
  record.containers.push_back(old);
  const auto ledger = Synced(Policy(8), record);
  const auto usage = ledger->Usage().at(gpu);
  EXPECT_EQ(usage.pods, 3u);
  EXPECT_EQ(usage.unrecorded, 1u);
  EXPECT_EQ(devices::ReservedOn(node.devices[0], usage, ledger->policy()), 14 * kGi);
  EXPECT_FALSE(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "2Gi"}}), "c"));
  EXPECT_EQ(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "1Gi"}}), "d"),
            AllocationError::Kind::kMemoryExhausted);
}

TEST(LedgerMemory, AssignedDevicesAndExclusivePodsCount) {
  const auto node = SixteenGi();
  const auto ledger = Synced(Policy(4));
  // A device some plugin assigned is counted at the default (16Gi / 4).
  const auto assigned = test::ReserveAssigned(*ledger, node.devices, "k", "default/k");
  EXPECT_EQ(assigned.placed.memory, std::vector<std::uint64_t>{4 * kGi});
  ledger->Commit(assigned.id);
  EXPECT_FALSE(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "12Gi"}}), "a"));
  EXPECT_EQ(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "1Gi"}}), "b"),
            AllocationError::Kind::kMemoryExhausted);
  ledger->SandboxGone("k");
  ledger->SandboxGone("a");
  const auto exclusive =
      test::Reserve(*ledger, node, Request({{"dxshim.io/sharing", "exclusive"}}), "x");
  EXPECT_EQ(exclusive.placed.memory, std::vector<std::uint64_t>{16 * kGi});
}

// Memory units (devices::Placed::memory_units): a pod's hold keeps the ids, and another of its
// containers that brings ids it does not hold grows its reservation, held only if the growth is
// still free under the ledger's lock and the pod's hold is still what the growth was read from.

std::set<std::string> UnitIds(unsigned first, unsigned count) {
  std::set<std::string> out;
  for (unsigned i = first; i < first + count; ++i) out.insert("mem-0a1b2c3d-" + std::to_string(i));
  return out;
}

// The pod `sandbox`'s devices again, for a container given `units`, grown as the decision grows
// them (shim/gpu/container_decision.cpp): to all of the pod's units over its GPUs.
devices::Placed HeldWith(const Ledger& ledger, const Inventory& node, const std::string& sandbox,
                         const std::set<std::string>& units) {
  const auto view = ledger.View();
  auto held = devices::Held(node, view.usage, sandbox, ledger.policy()).value();
  const auto had =
      view.memory_units.count(sandbox) ? view.memory_units.at(sandbox) : std::set<std::string>{};
  held.memory_units = had;
  held.memory_units.insert(units.begin(), units.end());
  const auto memory =
      devices::MemoryOfUnits(held.memory_units.size(), held.devices.size(), ledger.policy());
  return devices::GrowHeld(held, view.usage, memory, "adds", ledger.policy());
}

std::optional<std::uint64_t> MemoryOf(const Ledger& ledger, const std::string& gpu,
                                      const std::string& sandbox) {
  const auto usage = ledger.Usage();
  for (const auto& h : usage.at(gpu).holders) {
    if (h.sandbox_id == sandbox) return h.memory;
  }
  return std::nullopt;
}

TEST(LedgerMemory, AHeldPodGrowsOnlyIfTheGrowthIsStillFreeAndUndoesItWhenReleased) {
  const auto node = SixteenGi();
  const auto& gpu = node.devices[0].id;
  const auto ledger = Synced(Policy(8));
  // The pod's first container: 4 units, 4Gi.
  auto first = devices::Choose(node, ledger->Usage(), Request({{"dxshim.io/gpu-memory", "4Gi"}}),
                               ledger->policy());
  first.memory_units = UnitIds(0, 4);
  ledger->Commit(ledger->Hold(first, "p", "default/p", "app").value());
  // Its second brings 4 more: 8Gi, read while 12Gi are free...
  const auto grown = HeldWith(*ledger, node, "p", UnitIds(4, 4));
  EXPECT_EQ(grown.memory, std::vector<std::uint64_t>{8 * kGi});
  // ...but another pod takes 9Gi before it is held: 3Gi free, not the 4Gi it grows by.
  const auto other = test::Reserve(*ledger, node, Request({{"dxshim.io/gpu-memory", "9Gi"}}), "q");
  EXPECT_FALSE(ledger->Hold(grown, "p", "default/p", "sidecar"));
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 4 * kGi);
  EXPECT_EQ(ledger->View().memory_units.at("p"), UnitIds(0, 4));
  ledger->Release(other.id);
  // Held now; its CreateContainer fails: the growth goes with it.
  auto id = ledger->Hold(grown, "p", "default/p", "sidecar");
  ASSERT_TRUE(id);
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 8 * kGi);
  EXPECT_EQ(ledger->View().memory_units.at("p"), UnitIds(0, 8));
  ledger->Release(*id);
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 4 * kGi);
  EXPECT_EQ(ledger->View().memory_units.at("p"), UnitIds(0, 4));
  // Held and created: the pod holds 8Gi until it is gone.
  ledger->Commit(ledger->Hold(grown, "p", "default/p", "sidecar").value());
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 8 * kGi);
  EXPECT_EQ(ledger->Holdings().at(0).memory, std::vector<std::optional<std::uint64_t>>{8 * kGi});
  // The same units again (a re-created container) hold what the pod holds.
  ledger->Release(ledger->Hold(grown, "p", "default/p", "sidecar").value());
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 8 * kGi);
  // A growth read before another of the pod's containers grew it is not held (it misses that
  // container's units); chosen again, it counts them.
  const auto stale = HeldWith(*ledger, node, "p", UnitIds(8, 2));
  ledger->Commit(
      ledger->Hold(HeldWith(*ledger, node, "p", UnitIds(10, 2)), "p", "default/p", "c3").value());
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 10 * kGi);
  EXPECT_FALSE(ledger->Hold(stale, "p", "default/p", "c4"));
  const auto fresh = HeldWith(*ledger, node, "p", UnitIds(8, 2));
  EXPECT_EQ(fresh.memory, std::vector<std::uint64_t>{12 * kGi});
  ledger->Commit(ledger->Hold(fresh, "p", "default/p", "c4").value());
  EXPECT_EQ(ledger->Usage().at(gpu).memory, 12 * kGi);
  ledger->SandboxGone("p");
  EXPECT_TRUE(ledger->Usage().empty());
}

TEST(LedgerMemory, ARebuiltPodHoldsTheLargestReservationAndAllUnitsOfItsContainers) {
  const auto node = SixteenGi();
  const auto& gpu = node.devices[0].id;
  RuntimeRecord record;
  record.ready_sandboxes = {"p"};
  record.pod_names = {{"p", "ns/p"}};
  // Each container's label says what the pod reserved once it was created: 2Gi (the init
  // container's 2 units), 4Gi (the app's 4, 2 of them the init container's), 8Gi.
  const std::vector<std::tuple<std::string, std::set<std::string>, std::uint64_t, bool>> created = {
      {"init", UnitIds(0, 2), 2 * kGi, true},
      {"app", UnitIds(0, 4), 4 * kGi, false},
      {"sidecar", UnitIds(4, 4), 8 * kGi, false}};
  for (const auto& [name, units, memory, exited] : created) {
    RecordedContainer c;
    c.container_id = "c-" + name;
    c.sandbox_id = "p";
    c.name = name;
    c.device_ids = {gpu};
    c.memory = {memory};
    c.exited = exited;
    c.plugin_memory_units.assign(units.begin(), units.end());
    record.containers.push_back(c);
  }
  const auto ledger = Synced(Policy(8), record);
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 8 * kGi);
  EXPECT_EQ(ledger->View().memory_units.at("p"), UnitIds(0, 8));
  // A re-created container with the units it had grows nothing.
  const auto again = HeldWith(*ledger, node, "p", UnitIds(0, 4));
  EXPECT_EQ(again.memory, std::vector<std::uint64_t>{8 * kGi});
  ledger->Commit(ledger->Hold(again, "p", "ns/p", "app").value());
  EXPECT_EQ(ledger->Usage().at(gpu).memory, 8 * kGi);
  // The same order reversed, and a resync replaying a growth committed meanwhile.
  std::reverse(record.containers.begin(), record.containers.end());
  ledger->BeginResync();
  const auto grown = HeldWith(*ledger, node, "p", UnitIds(8, 2));
  ledger->Commit(ledger->Hold(grown, "p", "ns/p", "late").value());
  ledger->FinishResync(record);
  EXPECT_EQ(MemoryOf(*ledger, gpu, "p"), 10 * kGi);
  EXPECT_EQ(ledger->View().memory_units.at("p"), UnitIds(0, 10));
}

// Old rule: a shared pod needs a pod slot on a GPU no exclusive pod holds, an exclusive pod an
// unheld GPU. A ledger whose GPUs have no memory to share (gpu-memory-reserved above their
// memory) counts pods only: the reference. With the default (auto) the memory ledger admits, step
// by step, exactly what it admits, for every example inventory, sharing limit, placement and a
// random mix of shared, exclusive and two-GPU pods coming and going. Where the memory ledger
// places a pod the reference is asked for those same GPUs (pinned): on GPUs of different sizes
// the two placements order GPUs differently (free memory against pods), which is a choice of
// GPU, not of what a GPU admits.
TEST(LedgerMemory, TheDefaultAdmitsWhatCountingPodsAdmitted) {
  for (const char* file : {"nvidia-t4.yaml", "amd-radeon.yaml", "intel-igpu.yaml",
                           "mcdm-compute.yaml", "hetero-node.yaml"}) {
    const auto node = Load(file);
    for (const unsigned max : {1u, 2u, 3u, 4u, 7u, 8u}) {
      for (const auto placement : {SpreadOrPack::kSpread, SpreadOrPack::kPack}) {
        auto counting = Policy(max, placement);
        counting.gpu_memory_reserved = 1ull << 50;
        const auto reference = Synced(counting);
        const auto memory = Synced(Policy(max, placement));
        std::mt19937 random(max * 31 + (placement == SpreadOrPack::kPack ? 1 : 0));
        std::vector<std::string> holding;
        for (int step = 0; step < 200; ++step) {
          if (!holding.empty() && random() % 3 == 0) {
            const auto victim = holding[random() % holding.size()];
            reference->SandboxGone(victim);
            memory->SandboxGone(victim);
            std::erase(holding, victim);
            continue;
          }
          std::map<std::string, std::string> annotations = {{"dxshim.io/gpu", "1"}};
          if (random() % 5 == 0) annotations["dxshim.io/sharing"] = "exclusive";
          if (random() % 7 == 0) annotations["dxshim.io/gpu"] = "2";
          const auto request = Request(annotations);
          const auto sandbox = "pod-" + std::to_string(step);
          std::vector<std::string> chosen;
          const auto got = Admit(*memory, node, request, sandbox, nullptr, &chosen);
          auto same_gpus = request;
          same_gpus.pins = chosen;
          const auto expected = Admit(*reference, node, got ? request : same_gpus, sandbox);
          ASSERT_EQ(expected.has_value(), got.has_value())
              << file << " max=" << max << " " << devices::ToString(placement) << " step " << step;
          if (expected) {
            EXPECT_EQ(*got, *expected) << file << " step " << step;
          } else {
            holding.push_back(sandbox);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace dxshim
