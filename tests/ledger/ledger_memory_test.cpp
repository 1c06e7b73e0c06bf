// The ledger's GPU memory (shim/ledger/ledger.h, devices/allocation/gpu_memory.h): a pod's
// reservation is part of its hold, rebuilt exactly from the runtime record's dxshim.io/gpu-memory
// labels (a hold recorded before memory was counted takes the default), and the default keeps
// what a configuration admitted when only pods were counted. Devices come from the example
// inventories (no GPU here).
#include <gtest/gtest.h>

#include <random>

#include "devices/allocation/gpu_memory.h"
#include "devices/inventory_file.h"
#include "shim/ledger/ledger.h"

namespace dxshim {
namespace {

using devices::AllocationError;
using devices::AllocationPolicy;
using devices::Inventory;
using devices::Placement;

constexpr std::uint64_t kGi = 1ull << 30;

Inventory Load(const std::string& name) {
  Inventory inv;
  inv.devices = devices::LoadInventoryFile(DXSHIM_SOURCE_DIR "/deploy/examples/inventories/" + name);
  inv.generation = 1;
  return inv;
}

Inventory SixteenGi() {  // one T4 made a 16Gi card
  auto node = Load("nvidia-t4.yaml");
  node.devices[0].dedicated_memory = 16 * kGi;
  return node;
}

devices::DeviceRequest Request(const std::map<std::string, std::string>& annotations) {
  return *devices::ParseDeviceRequest(annotations);
}

AllocationPolicy Policy(unsigned max, Placement placement = Placement::kSpread) {
  AllocationPolicy p;
  p.max_containers_per_device = max;
  p.placement = placement;
  return p;
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
    const auto r = ledger.Reserve(node, request, sandbox, "default/" + sandbox);
    ledger.Commit(r.id);
    for (const auto& d : r.devices) {
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
  const auto again = ledger->Reserve(node, six, "a");
  EXPECT_EQ(again.memory, std::vector<std::uint64_t>{6 * kGi});
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
    EXPECT_NE(message.find("(ns/a 6Gi, ns/b 6Gi, default/c 4Gi)"), std::string::npos) << message;
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
  const auto assigned = ledger->ReserveAssigned(node.devices, "k", "default/k");
  EXPECT_EQ(assigned.memory, std::vector<std::uint64_t>{4 * kGi});
  ledger->Commit(assigned.id);
  EXPECT_FALSE(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "12Gi"}}), "a"));
  EXPECT_EQ(Admit(*ledger, node, Request({{"dxshim.io/gpu-memory", "1Gi"}}), "b"),
            AllocationError::Kind::kMemoryExhausted);
  ledger->SandboxGone("k");
  ledger->SandboxGone("a");
  const auto exclusive = ledger->Reserve(node, Request({{"dxshim.io/sharing", "exclusive"}}), "x");
  EXPECT_EQ(exclusive.memory, std::vector<std::uint64_t>{16 * kGi});
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
      for (const auto placement : {Placement::kSpread, Placement::kPack}) {
        auto counting = Policy(max, placement);
        counting.gpu_memory_reserved = 1ull << 50;
        const auto reference = Synced(counting);
        const auto memory = Synced(Policy(max, placement));
        std::mt19937 random(max * 31 + (placement == Placement::kPack ? 1 : 0));
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
              << file << " max=" << max << " " << devices::ToString(placement) << " step "
              << step;
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
