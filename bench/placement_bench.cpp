// GPUs shared by memory: how well `spread` and `pack` fill a node, and how often the node-level
// count kubelet sees (dxshim.io/gpu-memory units) admits a pod that no single GPU can hold.
// 8 GPUs of 16Gi; pods of random sizes (1-8Gi, whole Gi as the memory resource asks) arrive one
// by one, and in the churn phase also leave. Printed, never asserted; the same seeds every run.
//
// utilisation: reserved / capacity over the node once 200 pods have arrived.
// kubelet-admits-dxshim-refuses: pods whose units fit the node's free units (what kubelet's
// device manager counts) but no single GPU's free memory: the pod passes admission and fails at
// CreateContainer with RESOURCE_EXHAUSTED, as a pod of N > 1 GPUs can today.
#include <cstdio>
#include <random>
#include <string>

#include "devices/allocation/gpu_memory.h"
#include "shim/ledger/ledger.h"
#include "tests/support/ledger_reserve.h"

namespace {

using dxshim::devices::AllocationError;
using dxshim::devices::SpreadOrPack;
constexpr std::uint64_t kGi = 1ull << 30;

struct Outcome {
  int admitted = 0;
  int refused = 0;
  int kubelet_admits_dxshim_refuses = 0;
  double utilisation = 0;
};

dxshim::devices::Inventory Node() {
  dxshim::devices::Inventory node;
  for (int i = 0; i < 8; ++i) {
    dxshim::devices::Device d;
    d.id = "gpu-" + std::to_string(i);
    d.description = "16Gi GPU";
    d.location_path = "PCIROOT(0)#PCI(0" + std::to_string(i) + "00)";
    d.vendor = "nvidia";
    d.dedicated_memory = 16 * kGi;
    node.devices.push_back(d);
  }
  node.generation = 1;
  return node;
}

Outcome Run(SpreadOrPack order, bool churn, unsigned seed) {
  const auto node = Node();
  dxshim::devices::AllocationPolicy policy;
  policy.max_containers_per_device = 16;
  policy.spread_or_pack = order;
  dxshim::Ledger ledger(policy);
  ledger.BeginResync();
  ledger.FinishResync({});
  std::mt19937 random(seed);
  std::vector<std::string> holding;
  Outcome out;
  for (int pod = 0; pod < 200; ++pod) {
    if (churn && !holding.empty() && random() % 2 == 0) {
      const auto i = random() % holding.size();
      ledger.SandboxGone(holding[i]);
      holding.erase(holding.begin() + static_cast<long>(i));
    }
    const auto gi = 1 + random() % 8;
    dxshim::devices::DeviceRequest request;
    request.gpu_memory = gi * kGi;
    // What kubelet counts: the node's free units (each GPU's capacity in units less the units
    // its pods hold).
    std::uint64_t free_units = 0;
    const auto usage = ledger.Usage();
    for (const auto& d : node.devices) {
      const auto it = usage.find(d.id);
      const auto reserved =
          it == usage.end() ? 0 : dxshim::devices::ReservedOn(d, it->second, policy);
      free_units += (dxshim::devices::MemoryCapacity(d, policy) - reserved) / kGi;
    }
    const auto sandbox = "pod-" + std::to_string(pod);
    try {
      ledger.Commit(dxshim::test::Reserve(ledger, node, request, sandbox, sandbox).id);
      holding.push_back(sandbox);
      ++out.admitted;
    } catch (const AllocationError&) {
      ++out.refused;
      if (gi <= free_units) ++out.kubelet_admits_dxshim_refuses;
    }
  }
  std::uint64_t reserved = 0;
  std::uint64_t capacity = 0;
  const auto usage = ledger.Usage();
  for (const auto& d : node.devices) {
    const auto it = usage.find(d.id);
    if (it != usage.end()) reserved += dxshim::devices::ReservedOn(d, it->second, policy);
    capacity += dxshim::devices::MemoryCapacity(d, policy);
  }
  out.utilisation = static_cast<double>(reserved) / static_cast<double>(capacity);
  return out;
}

}  // namespace

int main() {
  std::printf("8 GPUs x 16Gi, 200 pods of 1-8Gi (uniform), 5 seeds each\n");
  std::printf("%-18s %-7s %9s %9s %12s %22s\n", "phase", "policy", "admitted", "refused",
              "utilisation", "kubelet-admits-refused");
  for (const bool churn : {false, true}) {
    for (const auto placement : {SpreadOrPack::kSpread, SpreadOrPack::kPack}) {
      Outcome sum;
      for (unsigned seed = 1; seed <= 5; ++seed) {
        const auto o = Run(placement, churn, seed);
        sum.admitted += o.admitted;
        sum.refused += o.refused;
        sum.kubelet_admits_dxshim_refuses += o.kubelet_admits_dxshim_refuses;
        sum.utilisation += o.utilisation / 5;
      }
      const double gap = sum.refused ? 100.0 * sum.kubelet_admits_dxshim_refuses / sum.refused : 0;
      std::printf("%-18s %-7s %9d %9d %11.1f%% %10d (%.0f%% of refusals)\n",
                  churn ? "arrive and leave" : "arrive only", ToString(placement), sum.admitted,
                  sum.refused, 100 * sum.utilisation, sum.kubelet_admits_dxshim_refuses, gap);
    }
  }
  return 0;
}
