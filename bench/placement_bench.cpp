// GPUs shared by memory: how well `spread` and `pack` fill a node, and how often the count kubelet
// sees for dxshim's memory resource (dxshim.io/gpu-memory, units of 1Gi) admits a pod that dxshim
// then refuses at CreateContainer with RESOURCE_EXHAUSTED (a late refusal: the pod passed the
// scheduler and kubelet's admission, and no controller replaces it), under the count before
// issue 50 and under the count since.
// 8 GPUs of 16Gi; pods of random sizes (1-8Gi, whole Gi as the memory resource asks, one GPU each)
// arrive one by one, and in the churn phase also leave; at 16, 4 and 1 pod(s) per GPU
// (max_containers_per_device; 1 is the default). Printed, never asserted; the same seeds every run.
// Every scenario of a seed draws the same sizes and leaves at the same moments (which pod leaves
// is drawn among those held, so it differs with what was admitted).
//
// Each pod is placed as `dxshim serve` places it (a choice over the ledger's usage, then held);
// both counts are taken from the usage just before the pod arrives and only measured, never acted
// on. A pod either count would refuse at admission is one dxshim refuses anyway (see the last
// column), so neither count would change a placement: old and new are measured on the same run.
// The count is taken as if the plugin sent it after every change (ListAndWatch sends it within
// 0.1-0.3 s: bench/README.md); pods arriving faster than that see an older count.
//
// utilisation: reserved / capacity over the node once 200 pods have arrived.
// late, old count: refusals whose units fit the node's free units summed over its GPUs (each
// GPU's capacity in units less the units its pods hold), what kubelet's device manager counted
// before issue 50.
// late, new count: refusals whose units fit devices::FindLargestFit, the most free units on one
// GPU that also has a pod slot free: since issue 50 kubelet is offered the units allocated plus
// that, so a larger pod is refused at admission, early. Expected 0.
// refused early, placeable: the opposite error of the new count, pods it refuses (units above the
// largest fit) that devices::Choose would place on the same usage. Expected 0.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "devices/allocation/gpu_memory.h"
#include "devices/allocation/memory_fit.h"
#include "shim/ledger/ledger.h"
#include "tests/support/ledger_reserve.h"

namespace {

using dxshim::devices::AllocationError;
using dxshim::devices::SpreadOrPack;
constexpr std::uint64_t kGi = 1ull << 30;
constexpr unsigned kSeeds = 5;

struct Outcome {
  int admitted = 0;
  int refused = 0;
  int late_old = 0;             // units <= the node's free units summed, refused by dxshim
  int late_new = 0;             // units <= the largest fit on one GPU, refused by dxshim
  int early_but_placeable = 0;  // units > the largest fit, placed by Choose
  double utilisation = 0;

  void AddCounts(const Outcome& o) {
    admitted += o.admitted;
    refused += o.refused;
    late_old += o.late_old;
    late_new += o.late_new;
    early_but_placeable += o.early_but_placeable;
  }
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

// Whether dxshim's choice places `request` on `usage` (nothing is held).
bool Placeable(const dxshim::devices::Inventory& node, const dxshim::devices::Usage& usage,
               const dxshim::devices::DeviceRequest& request,
               const dxshim::devices::AllocationPolicy& policy) {
  try {
    dxshim::devices::Choose(node, usage, request, policy);
    return true;
  } catch (const AllocationError&) {
    return false;
  }
}

Outcome Run(SpreadOrPack order, unsigned per_device, bool churn, unsigned seed) {
  const auto node = Node();
  dxshim::devices::AllocationPolicy policy;
  policy.max_containers_per_device = per_device;
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
    const auto usage = ledger.Usage();
    // The old count: the node's free units, summed over its GPUs.
    std::uint64_t free_units = 0;
    for (const auto& d : node.devices) {
      const auto it = usage.find(d.id);
      const auto reserved =
          it == usage.end() ? 0 : dxshim::devices::ReservedOn(d, it->second, policy);
      free_units += (dxshim::devices::MemoryCapacity(d, policy) - reserved) / kGi;
    }
    // The new count: the most free units on one GPU with a pod slot free.
    const auto fit_units = dxshim::devices::FindLargestFit(node, usage, policy).bytes / kGi;
    if (gi > fit_units && Placeable(node, usage, request, policy)) ++out.early_but_placeable;
    const auto sandbox = "pod-" + std::to_string(pod);
    try {
      ledger.Commit(dxshim::test::Reserve(ledger, node, request, sandbox, sandbox).id);
      holding.push_back(sandbox);
      ++out.admitted;
    } catch (const AllocationError&) {
      ++out.refused;
      if (gi <= free_units) ++out.late_old;
      if (gi <= fit_units) ++out.late_new;
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

double PercentOf(int part, int whole) { return whole ? 100.0 * part / whole : 0; }

}  // namespace

int main() {
  std::printf("8 GPUs x 16Gi, 200 pods of 1-8Gi (uniform), %u seeds each\n", kSeeds);
  std::printf("late: kubelet admits, dxshim refuses at CreateContainer (%% of refusals)\n");
  std::printf("%-5s %-16s %-6s %8s %7s %11s %16s %16s %17s\n", "pods/", "phase", "policy",
              "admitted", "refused", "utilisation", "late, old count", "late, new count",
              "refused early,");
  std::printf("%-5s %-16s %-6s %8s %7s %11s %16s %16s %17s\n", "GPU", "", "", "", "", "", "(sum)",
              "(largest fit)", "placeable");
  Outcome total;
  for (const unsigned per_device : {16u, 4u, 1u}) {
    for (const bool churn : {false, true}) {
      for (const auto placement : {SpreadOrPack::kSpread, SpreadOrPack::kPack}) {
        Outcome sum;
        for (unsigned seed = 1; seed <= kSeeds; ++seed) {
          const auto o = Run(placement, per_device, churn, seed);
          sum.AddCounts(o);
          sum.utilisation += o.utilisation / kSeeds;
        }
        total.AddCounts(sum);
        std::printf("%-5u %-16s %-6s %8d %7d %10.1f%% %7d (%5.1f%%) %7d (%5.1f%%) %17d\n",
                    per_device, churn ? "arrive and leave" : "arrive only", ToString(placement),
                    sum.admitted, sum.refused, 100 * sum.utilisation, sum.late_old,
                    PercentOf(sum.late_old, sum.refused), sum.late_new,
                    PercentOf(sum.late_new, sum.refused), sum.early_but_placeable);
      }
    }
  }
  std::printf(
      "all 12 scenarios: %d refusals; late under the old count %d (%.1f%%), under the new %d "
      "(%.1f%%); refused early though placeable %d\n",
      total.refused, total.late_old, PercentOf(total.late_old, total.refused), total.late_new,
      PercentOf(total.late_new, total.refused), total.early_but_placeable);
  return 0;
}
