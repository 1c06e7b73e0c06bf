#include "devices/allocation/placement.h"

#include <algorithm>

#include "devices/allocation/gpu_memory.h"
#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"

namespace dxshim::devices {
namespace {

// Devices of one vendor and one DriverStore folder form a group: a container never gets two
// groups, whose runtime files would collide (two OpenCL.dll, two vulkan-1.dll).
std::string GroupKey(const Device& d) {
  return ToLowerAscii(d.vendor) + "|" + ToLowerAscii(d.driver_store);
}

// Why `d` cannot serve request `r`, or "" if it can.
std::string Mismatch(const Device& d, const DeviceRequest& r, const AllocationPolicy& policy) {
  if (!d.present) return "not present";
  if (r.device_class && d.device_class != *r.device_class) {
    return std::string("class ") + ToString(d.device_class);
  }
  if (!r.vendor.empty() && ToLowerAscii(d.vendor) != r.vendor)
    return "vendor " + ToLowerAscii(d.vendor);
  if (r.vendor_id && d.vendor_id != r.vendor_id) return "vendor id " + HexNumber(d.vendor_id, 4);
  if (d.dedicated_memory < r.min_memory) {
    return std::to_string(d.dedicated_memory >> 20) + "Mi of memory";
  }
  for (const auto& file : r.required_files) {
    const bool has = std::any_of(d.system32.begin(), d.system32.end(), [&](const RuntimeFile& f) {
      return EqualsIgnoreCase(f.destination, file);
    });
    if (!has) return "no " + file;
  }
  if (r.gpu_memory && r.gpu_memory > MemoryCapacity(d, policy)) {
    return FormatBytes(MemoryCapacity(d, policy)) + " of memory to share, less than gpu-memory " +
           FormatBytes(r.gpu_memory);
  }
  if (!r.pins.empty()) {
    const bool pinned = std::any_of(r.pins.begin(), r.pins.end(),
                                    [&](const std::string& pin) { return PinMatches(pin, d); });
    if (!pinned) return "not pinned";
  }
  return "";
}

std::string NodeSummary(const Inventory& inventory) {
  if (inventory.devices.empty()) return "this node has no GPU in dxshim's inventory";
  std::string out = "this node has: ";
  for (std::size_t i = 0; i < inventory.devices.size(); ++i) {
    const auto& d = inventory.devices[i];
    out += (i ? "; " : "") + d.description + " (" + ToLowerAscii(d.vendor) + ", " +
           ToString(d.device_class) + ", " + std::to_string(d.dedicated_memory >> 20) + "Mi)";
  }
  return out;
}

// "N/M pods": how many pods hold a device out of the most it may serve.
std::string PodCount(unsigned pods, unsigned per_device) {
  return std::to_string(pods) + "/" + std::to_string(per_device) + " pods";
}

// "N/M pods", and " (exclusive)" when an exclusive pod holds it.
std::string Occupancy(const DeviceUsage& u, unsigned per_device) {
  return PodCount(u.pods, per_device) + (u.exclusive ? " (exclusive)" : "");
}

// Holders named per device in a refusal: kubelet shows the message as the pod's event, and a GPU
// shared by dozens of pods would make it kilobytes long.
constexpr std::size_t kHoldersNamed = 8;

// "16Gi, 12Gi reserved (default/a 6Gi, default/b 6Gi), 4Gi free, 2/8 pods": a device's memory
// and who reserved it (the first kHoldersNamed by name, then how many more), for a refusal.
std::string MemoryUse(const Device& d, const DeviceUsage& u, const AllocationPolicy& policy) {
  const auto capacity = MemoryCapacity(d, policy);
  const auto reserved = ReservedOn(d, u, policy);
  std::string out = FormatBytes(capacity) + ", " + FormatBytes(reserved) + " reserved";
  if (!u.holders.empty()) {
    out += " (";
    const auto named = std::min(u.holders.size(), kHoldersNamed);
    for (std::size_t i = 0; i < named; ++i) {
      const auto& h = u.holders[i];
      const auto bytes = HeldGpuMemory(d, h.memory, h.exclusive, policy);
      const char* how = h.exclusive ? " exclusive" : h.memory ? "" : " by default";
      out += (i ? ", " : "") + h.pod + " " + FormatBytes(bytes) + how;
    }
    if (named < u.holders.size()) {
      out += " and " + std::to_string(u.holders.size() - named) + " more pods";
    }
    out += ")";
  }
  out += ", " + FormatBytes(capacity > reserved ? capacity - reserved : 0) + " free, " +
         Occupancy(u, policy.max_containers_per_device);
  return out;
}

// One choice in progress: the request, what is in use, and what matched.
class Chooser {
 public:
  Chooser(const Inventory& inventory, const Usage& usage, const DeviceRequest& request,
          const AllocationPolicy& policy)
      : inventory_(inventory),
        usage_(usage),
        request_(request),
        policy_(policy),
        asked_("request (" + Describe(request) + ")") {}

  Placed Run() {
    Match();
    const auto groups = Groups();
    const auto best = Best(groups);
    Placed placed;
    placed.exclusive = request_.exclusive;
    placed.memory_asked = request_.gpu_memory != 0 && !request_.exclusive;
    placed.considered = Considered(best);
    placed.explanation = Describe(request_) + " -> ";
    for (std::size_t i = 0; i < best.size(); ++i) {
      const auto* d = best[i];
      placed.explanation +=
          (i ? ", " : "") + DeviceName(*d) + " (reserves " + FormatBytes(Need(d)) + " of " +
          FormatBytes(MemoryCapacity(*d, policy_)) + ", " + FormatBytes(Free(d)) + " free and " +
          PodCount(Of(d).pods, policy_.max_containers_per_device) + " before)";
      placed.devices.push_back(*d);
      placed.memory.push_back(Need(d));
    }
    placed.explanation += "; " + std::string(ToString(policy_.spread_or_pack)) + " over " +
                          std::to_string(matches_.size()) + " matching GPU(s)";
    return placed;
  }

 private:
  using Group = std::vector<const Device*>;

  const DeviceUsage& Of(const Device* d) const {
    static const DeviceUsage kUnused;
    const auto it = usage_.find(d->id);
    return it == usage_.end() ? kUnused : it->second;
  }

  // What the request reserves on `d`.
  std::uint64_t Need(const Device* d) const {
    if (request_.exclusive) return MemoryCapacity(*d, policy_);
    return request_.gpu_memory ? request_.gpu_memory : DefaultGpuMemory(*d, policy_);
  }

  std::uint64_t Free(const Device* d) const { return FreeOn(*d, Of(d), policy_); }

  bool HasPodRoom(const Device* d) const { return PodRoom(Of(d), request_.exclusive, policy_); }

  bool HasMemoryRoom(const Device* d) const { return Need(d) <= Free(d); }

  bool HasRoom(const Device* d) const { return HasPodRoom(d) && HasMemoryRoom(d); }

  // Whether `a` goes before `b`: spread, more free memory then fewer pods; pack, less free
  // memory then more pods (stable sorts keep inventory order on ties).
  bool Before(const Device* a, const Device* b) const {
    const auto fa = Free(a);
    const auto fb = Free(b);
    const bool spread = policy_.spread_or_pack == SpreadOrPack::kSpread;
    if (fa != fb) return spread ? fa > fb : fa < fb;
    return spread ? Of(a).pods < Of(b).pods : Of(a).pods > Of(b).pods;
  }

  // The devices that match, and a line for each that does not.
  void Match() {
    for (const auto& d : inventory_.devices) {
      const auto why = Mismatch(d, request_, policy_);
      if (why.empty()) {
        matches_.push_back(&d);
      } else {
        rejected_.push_back(DeviceName(d) + ": " + why);
      }
    }
    if (matches_.empty()) {
      const bool by_memory =
          request_.gpu_memory &&
          std::any_of(inventory_.devices.begin(), inventory_.devices.end(), [&](const Device& d) {
            auto r = request_;
            r.gpu_memory = 0;
            return Mismatch(d, r, policy_).empty();
          });
      if (by_memory) {
        throw AllocationError(AllocationError::Kind::kMemoryTooLarge,
                              "no GPU that matches the " + asked_ + " has " +
                                  FormatBytes(request_.gpu_memory) + " of memory to share" +
                                  SharedNote() + "; " + NodeSummary(inventory_));
      }
      throw AllocationError(AllocationError::Kind::kImpossible,
                            "no GPU matches the " + asked_ + "; " + NodeSummary(inventory_));
    }
  }

  // The matches by vendor and driver, in inventory order; throws when no group is big enough.
  std::vector<Group> Groups() const {
    std::vector<Group> groups;
    std::vector<std::string> keys;
    for (const auto* d : matches_) {
      const auto key = GroupKey(*d);
      const auto it = std::find(keys.begin(), keys.end(), key);
      if (it == keys.end()) {
        keys.push_back(key);
        groups.push_back({d});
      } else {
        groups[static_cast<std::size_t>(it - keys.begin())].push_back(d);
      }
    }
    const bool any_group_big_enough = std::any_of(
        groups.begin(), groups.end(), [&](const auto& g) { return g.size() >= request_.count; });
    if (any_group_big_enough) return groups;
    const auto matched = matches_.size();
    if (matched < request_.count) {
      throw AllocationError(AllocationError::Kind::kImpossible,
                            "only " + std::to_string(matched) + " GPU(s) match the " + asked_);
    }
    throw AllocationError(AllocationError::Kind::kVendorMix,
                          std::to_string(matched) + " GPUs match the " + asked_ + " but no " +
                              std::to_string(request_.count) +
                              " of them share one vendor and driver; dxshim never mixes them in "
                              "a container (their runtime files collide)");
  }

  // The group's devices with room, best first by the placement, cut to the request's count; of
  // all groups, the one whose devices are least (spread) or most (pack) used. Throws when none
  // has room.
  Group Best(const std::vector<Group>& groups) const {
    const bool spread = policy_.spread_or_pack == SpreadOrPack::kSpread;
    Group best;
    std::uint64_t best_free = 0;
    unsigned best_pods = 0;
    for (const auto& group : groups) {
      Group room;
      std::copy_if(group.begin(), group.end(), std::back_inserter(room),
                   [this](const Device* d) { return HasRoom(d); });
      if (room.size() < request_.count) continue;
      std::stable_sort(room.begin(), room.end(),
                       [this](const Device* a, const Device* b) { return Before(a, b); });
      room.resize(request_.count);
      std::uint64_t free = 0;
      unsigned pods = 0;
      for (const auto* d : room) {
        free += Free(d);
        pods += Of(d).pods;
      }
      const bool better = spread ? (free > best_free || (free == best_free && pods < best_pods))
                                 : (free < best_free || (free == best_free && pods > best_pods));
      if (best.empty() || better) {
        best = room;
        best_free = free;
        best_pods = pods;
      }
    }
    if (!best.empty()) return best;
    // Memory is what ran out when a GPU has a pod slot free but not the memory.
    const bool memory = std::any_of(matches_.begin(), matches_.end(), [this](const Device* d) {
      return HasPodRoom(d) && !HasMemoryRoom(d);
    });
    std::string busy;
    for (const auto* d : matches_) {
      busy += (busy.empty() ? "" : "; ") + DeviceName(*d) + ": " + MemoryUse(*d, Of(d), policy_);
    }
    if (memory) {
      throw AllocationError(
          AllocationError::Kind::kMemoryExhausted,
          "the " + asked_ + " reserves " + NeedText() + ", more than is free now on " +
              (request_.count > 1 ? std::to_string(request_.count) + " of " : "") + "the " +
              std::to_string(matches_.size()) + " matching GPU(s): " + busy);
    }
    throw AllocationError(AllocationError::Kind::kExhausted,
                          "all " + std::to_string(matches_.size()) + " GPU(s) matching the " +
                              asked_ + " are in use: " + busy);
  }

  // "6Gi" (asked), or "the default (4Gi)".
  std::string NeedText() const {
    if (request_.gpu_memory) return FormatBytes(request_.gpu_memory) + " of GPU memory per GPU";
    return "the default GPU memory (" + FormatBytes(Need(matches_.front())) + ")";
  }

  // How capacity is counted, when the host keeps some.
  std::string SharedNote() const {
    if (!policy_.gpu_memory_reserved) return "";
    return " (dedicated memory less gpu-memory-reserved " +
           FormatBytes(policy_.gpu_memory_reserved) + ")";
  }

  // A line per matching device (chosen, or why another was), then the ones that did not match.
  std::vector<std::string> Considered(const Group& best) {
    std::vector<std::string> considered;
    for (const auto* d : matches_) {
      const bool taken = std::find(best.begin(), best.end(), d) != best.end();
      std::string line = DeviceName(*d) + ": " + (taken ? "chosen" : "matches") + ", " +
                         Occupancy(Of(d), policy_.max_containers_per_device) + ", " +
                         FormatBytes(Free(d)) + " free";
      if (taken) {
        // nothing to add
      } else if (!HasPodRoom(d)) {
        line += request_.exclusive ? ", not free" : ", full";
      } else if (!HasMemoryRoom(d)) {
        line += ", not enough free memory for " + FormatBytes(Need(d));
      } else if (GroupKey(*d) != GroupKey(*best[0])) {
        line += ", other vendor/driver group";
      } else {
        line += std::string(", ") + ToString(policy_.spread_or_pack) +
                " preferred another (ties: inventory order)";
      }
      considered.push_back(std::move(line));
    }
    for (auto& r : rejected_) considered.push_back(std::move(r));
    return considered;
  }

  const Inventory& inventory_;
  const Usage& usage_;
  const DeviceRequest& request_;
  const AllocationPolicy& policy_;
  const std::string asked_;
  std::vector<const Device*> matches_;
  std::vector<std::string> rejected_;
};

}  // namespace

const char* ToString(SpreadOrPack p) { return p == SpreadOrPack::kSpread ? "spread" : "pack"; }

std::uint64_t ReservedOn(const Device& d, const DeviceUsage& usage,
                         const AllocationPolicy& policy) {
  if (usage.exclusive) return MemoryCapacity(d, policy);
  return usage.memory + usage.unrecorded * DefaultGpuMemory(d, policy);
}

bool PodRoom(const DeviceUsage& u, bool exclusive, const AllocationPolicy& policy) {
  if (exclusive) return u.pods == 0;
  return !u.exclusive && u.pods < policy.max_containers_per_device;
}

std::uint64_t FreeOn(const Device& d, const DeviceUsage& u, const AllocationPolicy& policy) {
  const auto capacity = MemoryCapacity(d, policy);
  const auto reserved = ReservedOn(d, u, policy);
  return capacity > reserved ? capacity - reserved : 0;
}

std::string DeviceName(const Device& d) { return d.description + " [" + d.location_path + "]"; }

Placed Choose(const Inventory& inventory, const Usage& usage, const DeviceRequest& request,
              const AllocationPolicy& policy) {
  return Chooser(inventory, usage, request, policy).Run();
}

std::optional<Placed> Held(const Inventory& inventory, const Usage& usage,
                           const std::string& sandbox_id, const AllocationPolicy& policy) {
  // The pod's place among each device's holders, in the order it holds the devices.
  std::map<std::size_t, std::pair<std::string, const DeviceHolder*>> held;
  for (const auto& [id, u] : usage) {
    for (const auto& h : u.holders) {
      if (h.sandbox_id == sandbox_id) held[h.index] = {id, &h};
    }
  }
  if (held.empty()) return std::nullopt;
  Placed placed;
  placed.source = Placed::Source::kHeld;
  placed.explanation = "the pod's GPUs: ";
  for (const auto& [index, at] : held) {
    const auto& [id, holder] = at;
    const auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                                 [&id = id](const Device& d) { return d.id == id; });
    if (it == inventory.devices.end()) {
      throw AllocationError(AllocationError::Kind::kImpossible,
                            "GPU " + id + " held by this pod is no longer on the node");
    }
    placed.explanation += (placed.devices.empty() ? "" : ", ") + DeviceName(*it);
    placed.devices.push_back(*it);
    placed.memory.push_back(HeldGpuMemory(*it, holder->memory, holder->exclusive, policy));
    placed.exclusive = holder->exclusive;
    placed.memory_asked = placed.memory_asked || (holder->memory && !holder->exclusive);
  }
  return placed;
}

Placed GrowHeld(Placed held, const Usage& usage, std::uint64_t memory, const std::string& adds,
                const AllocationPolicy& policy) {
  if (held.exclusive || held.devices.empty()) return held;
  static const DeviceUsage kUnused;
  bool fits = true;
  bool grows = false;
  std::string use;
  for (std::size_t i = 0; i < held.devices.size(); ++i) {
    const auto& d = held.devices[i];
    const auto it = usage.find(d.id);
    const auto& u = it == usage.end() ? kUnused : it->second;
    const auto now = held.memory.at(i);
    if (memory > now) {
      grows = true;
      fits = fits && memory - now <= FreeOn(d, u, policy);
    }
    use += (use.empty() ? "" : "; ") + DeviceName(d) + ": " + MemoryUse(d, u, policy);
  }
  const auto before = *std::min_element(held.memory.begin(), held.memory.end());
  if (!fits) {
    throw AllocationError(AllocationError::Kind::kMemoryExhausted,
                          adds + ", which would grow the pod's reservation from " +
                              FormatBytes(before) + " to " + FormatBytes(memory) +
                              " per GPU, more than is free now on its GPU(s): " + use);
  }
  if (!grows) return held;
  for (auto& m : held.memory) m = std::max(m, memory);
  held.memory_asked = true;
  held.explanation += "; " + adds + ": the pod's reservation grows from " + FormatBytes(before) +
                      " to " + FormatBytes(memory) + " per GPU";
  return held;
}

std::uint64_t MemoryOfUnits(std::size_t units, std::size_t gpus, const AllocationPolicy& policy) {
  return gpus == 0 ? 0 : static_cast<std::uint64_t>(units) * policy.gpu_memory_unit / gpus;
}

Placed Assigned(const std::vector<Device>& devices, const AllocationPolicy& policy) {
  Placed placed;
  placed.source = Placed::Source::kAssigned;
  placed.devices = devices;
  for (const auto& d : devices) {
    placed.memory.push_back(DefaultGpuMemory(d, policy));
    placed.explanation +=
        (placed.explanation.empty() ? "assigned by kubelet: " : ", ") + DeviceName(d);
  }
  return placed;
}

bool StillFits(const Placed& placed, const Usage& usage, const AllocationPolicy& policy) {
  static const DeviceUsage kUnused;
  for (std::size_t i = 0; i < placed.devices.size(); ++i) {
    const auto& d = placed.devices[i];
    const auto it = usage.find(d.id);
    const auto& u = it == usage.end() ? kUnused : it->second;
    if (!PodRoom(u, placed.exclusive, policy)) return false;
    const auto need = i < placed.memory.size() ? placed.memory[i] : 0;
    if (need > FreeOn(d, u, policy)) return false;
  }
  return true;
}

}  // namespace dxshim::devices
