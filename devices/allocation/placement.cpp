#include "devices/allocation/placement.h"

#include <algorithm>

#include "devices/runtime_files.h"

namespace dxshim::devices {
namespace {

// Devices of one vendor and one DriverStore folder form a group: a container never gets two
// groups, whose runtime files would collide (two OpenCL.dll, two vulkan-1.dll).
std::string GroupKey(const Device& d) {
  return ToLowerAscii(d.vendor) + "|" + ToLowerAscii(d.driver_store);
}

// Why `d` cannot serve request `r`, or "" if it can.
std::string Mismatch(const Device& d, const DeviceRequest& r) {
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
    placed.considered = Considered(best);
    placed.explanation = Describe(request_) + " -> ";
    for (std::size_t i = 0; i < best.size(); ++i) {
      placed.explanation += (i ? ", " : "") + DeviceName(*best[i]) + " (" +
                            PodCount(Of(best[i]).pods, policy_.max_containers_per_device) +
                            " before)";
      placed.devices.push_back(*best[i]);
    }
    placed.explanation += "; " + std::string(ToString(policy_.placement)) + " over " +
                          std::to_string(matches_.size()) + " matching GPU(s)";
    return placed;
  }

 private:
  using Group = std::vector<const Device*>;

  DeviceUsage Of(const Device* d) const {
    const auto it = usage_.find(d->id);
    return it == usage_.end() ? DeviceUsage{} : it->second;
  }

  bool HasRoom(const Device* d) const {
    const auto u = Of(d);
    if (request_.exclusive) return u.pods == 0;
    return !u.exclusive && u.pods < policy_.max_containers_per_device;
  }

  // The devices that match, and a line for each that does not.
  void Match() {
    for (const auto& d : inventory_.devices) {
      const auto why = Mismatch(d, request_);
      if (why.empty()) {
        matches_.push_back(&d);
      } else {
        rejected_.push_back(DeviceName(d) + ": " + why);
      }
    }
    if (matches_.empty()) {
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
    const bool spread = policy_.placement == Placement::kSpread;
    Group best;
    std::size_t best_score = 0;
    for (const auto& group : groups) {
      Group room;
      std::copy_if(group.begin(), group.end(), std::back_inserter(room),
                   [this](const Device* d) { return HasRoom(d); });
      if (room.size() < request_.count) continue;
      std::stable_sort(room.begin(), room.end(), [&](const Device* a, const Device* b) {
        return spread ? Of(a).pods < Of(b).pods : Of(a).pods > Of(b).pods;
      });
      room.resize(request_.count);
      std::size_t score = 0;
      for (const auto* d : room) score += Of(d).pods;
      if (best.empty() || (spread ? score < best_score : score > best_score)) {
        best = room;
        best_score = score;
      }
    }
    if (!best.empty()) return best;
    std::string busy;
    for (const auto* d : matches_) {
      busy += (busy.empty() ? "" : "; ") + DeviceName(*d) + " " +
              Occupancy(Of(d), policy_.max_containers_per_device);
    }
    throw AllocationError(AllocationError::Kind::kExhausted,
                          "all " + std::to_string(matches_.size()) + " GPU(s) matching the " +
                              asked_ + " are in use: " + busy);
  }

  // A line per matching device (chosen, or why another was), then the ones that did not match.
  std::vector<std::string> Considered(const Group& best) {
    std::vector<std::string> considered;
    for (const auto* d : matches_) {
      const bool taken = std::find(best.begin(), best.end(), d) != best.end();
      std::string line = DeviceName(*d) + ": " + (taken ? "chosen" : "matches") + ", " +
                         Occupancy(Of(d), policy_.max_containers_per_device);
      if (taken) {
        // nothing to add
      } else if (!HasRoom(d)) {
        line += request_.exclusive ? ", not free" : ", full";
      } else if (GroupKey(*d) != GroupKey(*best[0])) {
        line += ", other vendor/driver group";
      } else {
        line += std::string(", ") + ToString(policy_.placement) +
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

const char* ToString(Placement p) { return p == Placement::kSpread ? "spread" : "pack"; }

std::string DeviceName(const Device& d) { return d.description + " [" + d.location_path + "]"; }

Placed Choose(const Inventory& inventory, const Usage& usage, const DeviceRequest& request,
              const AllocationPolicy& policy) {
  return Chooser(inventory, usage, request, policy).Run();
}

}  // namespace dxshim::devices
