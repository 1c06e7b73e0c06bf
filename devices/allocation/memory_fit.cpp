#include "devices/allocation/memory_fit.h"

#include "devices/allocation/gpu_memory.h"

namespace dxshim::devices {
namespace {

const DeviceUsage& UsageOf(const Usage& usage, const Device& d) {
  static const DeviceUsage kUnused;
  const auto it = usage.find(d.id);
  return it == usage.end() ? kUnused : it->second;
}

}  // namespace

LargestFit FindLargestFit(const Inventory& inventory, const Usage& usage,
                          const AllocationPolicy& policy) {
  LargestFit best;
  for (const auto& d : inventory.devices) {
    if (!d.present) continue;
    const auto& u = UsageOf(usage, d);
    if (!PodRoom(u, false, policy)) continue;
    const auto free = FreeOn(d, u, policy);
    if (best.device == nullptr || free > best.bytes) best = {free, &d};
  }
  return best;
}

std::string FreeUnitsByGpu(const Inventory& inventory, const Usage& usage,
                           const AllocationPolicy& policy, std::uint64_t unit) {
  std::string out;
  for (const auto& d : inventory.devices) {
    if (!d.present) continue;
    const auto& u = UsageOf(usage, d);
    const auto per_device = policy.max_containers_per_device;
    const unsigned slots = u.exclusive || u.pods >= per_device ? 0 : per_device - u.pods;
    out += (out.empty() ? "" : "; ") + DeviceName(d) + ": " +
           std::to_string(unit ? FreeOn(d, u, policy) / unit : 0) + " units free, " +
           std::to_string(slots) + " of " + std::to_string(per_device) + " pod slots free" +
           (u.exclusive ? " (held exclusively)" : "");
  }
  return out.empty() ? "this node has no GPU present" : out;
}

}  // namespace dxshim::devices
