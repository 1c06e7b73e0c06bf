#include "devices/allocation/allocator.h"

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

std::string Name(const Device& d) { return d.description + " [" + d.location_path + "]"; }

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

}  // namespace

const char* ToString(Placement p) { return p == Placement::kSpread ? "spread" : "pack"; }

Allocator::Allocator(AllocationPolicy policy) : policy_(std::move(policy)) {}

std::map<std::string, DeviceUsage> Allocator::UsageLocked() const {
  std::map<std::string, DeviceUsage> usage;
  for (const auto& [sandbox, hold] : holds_) {
    for (const auto& id : hold.device_ids) {
      auto& u = usage[id];
      ++u.pods;
      u.exclusive = u.exclusive || hold.exclusive;
    }
  }
  return usage;
}

std::map<std::string, DeviceUsage> Allocator::Usage() const {
  std::lock_guard lock(mutex_);
  return UsageLocked();
}

std::vector<Device> Allocator::Choose(const Inventory& inventory, const DeviceRequest& request,
                                      std::string& explanation,
                                      std::vector<std::string>& considered) const {
  std::vector<const Device*> matches;
  std::vector<std::string> rejected;
  for (const auto& d : inventory.devices) {
    const auto why = Mismatch(d, request);
    if (why.empty()) {
      matches.push_back(&d);
    } else {
      rejected.push_back(Name(d) + ": " + why);
    }
  }
  const auto asked = "request (" + Describe(request) + ")";
  if (matches.empty()) {
    throw AllocationError(AllocationError::Kind::kImpossible,
                          "no GPU matches the " + asked + "; " + NodeSummary(inventory));
  }
  std::vector<std::vector<const Device*>> groups;
  std::vector<std::string> keys;
  for (const auto* d : matches) {
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
      groups.begin(), groups.end(), [&](const auto& g) { return g.size() >= request.count; });
  if (!any_group_big_enough) {
    throw AllocationError(
        matches.size() < request.count ? AllocationError::Kind::kImpossible
                                       : AllocationError::Kind::kVendorMix,
        matches.size() < request.count
            ? "only " + std::to_string(matches.size()) + " GPU(s) match the " + asked
            : std::to_string(matches.size()) + " GPUs match the " + asked + " but no " +
                  std::to_string(request.count) +
                  " of them share one vendor and driver; dxshim never mixes them in a container "
                  "(their runtime files collide)");
  }
  const auto usage = UsageLocked();
  const auto pods = [&](const Device* d) {
    const auto it = usage.find(d->id);
    return it == usage.end() ? DeviceUsage{} : it->second;
  };
  const auto has_room = [&](const Device* d) {
    const auto u = pods(d);
    if (request.exclusive) return u.pods == 0;
    return !u.exclusive && u.pods < policy_.max_containers_per_device;
  };
  const bool spread = policy_.placement == Placement::kSpread;
  std::vector<const Device*> best;
  std::size_t best_score = 0;
  for (const auto& group : groups) {
    std::vector<const Device*> room;
    std::copy_if(group.begin(), group.end(), std::back_inserter(room), has_room);
    if (room.size() < request.count) continue;
    std::stable_sort(room.begin(), room.end(), [&](const Device* a, const Device* b) {
      return spread ? pods(a).pods < pods(b).pods : pods(a).pods > pods(b).pods;
    });
    room.resize(request.count);
    std::size_t score = 0;
    for (const auto* d : room) score += pods(d).pods;
    if (best.empty() || (spread ? score < best_score : score > best_score)) {
      best = room;
      best_score = score;
    }
  }
  if (best.empty()) {
    std::string busy;
    for (const auto* d : matches) {
      const auto u = pods(d);
      busy += (busy.empty() ? "" : "; ") + Name(*d) + " " + std::to_string(u.pods) + "/" +
              std::to_string(policy_.max_containers_per_device) + " pods" +
              (u.exclusive ? " (exclusive)" : "");
    }
    throw AllocationError(AllocationError::Kind::kExhausted,
                          "all " + std::to_string(matches.size()) + " GPU(s) matching the " +
                              asked + " are in use: " + busy);
  }
  considered.clear();
  for (const auto* d : matches) {
    const auto u = pods(d);
    const bool taken = std::find(best.begin(), best.end(), d) != best.end();
    std::string line = Name(*d) + ": " + (taken ? "chosen" : "matches") + ", " +
                       std::to_string(u.pods) + "/" +
                       std::to_string(policy_.max_containers_per_device) + " pods" +
                       (u.exclusive ? " (exclusive)" : "");
    const bool same_group = GroupKey(*d) == GroupKey(*best[0]);
    if (taken) {
      // nothing to add
    } else if (!has_room(d)) {
      line += request.exclusive ? ", not free" : ", full";
    } else if (!same_group) {
      line += ", other vendor/driver group";
    } else {
      line += std::string(", ") + ToString(policy_.placement) +
              " preferred another (ties: inventory order)";
    }
    considered.push_back(std::move(line));
  }
  for (auto& r : rejected) considered.push_back(std::move(r));
  explanation = Describe(request) + " -> ";
  std::vector<Device> chosen;
  for (std::size_t i = 0; i < best.size(); ++i) {
    explanation += (i ? ", " : "") + Name(*best[i]) + " (" + std::to_string(pods(best[i]).pods) +
                   "/" + std::to_string(policy_.max_containers_per_device) + " pods before)";
    chosen.push_back(*best[i]);
  }
  explanation += "; " + std::string(ToString(policy_.placement)) + " over " +
                 std::to_string(matches.size()) + " matching GPU(s)";
  return chosen;
}

Reservation Allocator::Reserve(const Inventory& inventory, const DeviceRequest& request,
                               const std::string& sandbox_id) {
  std::lock_guard lock(mutex_);
  Reservation r;
  auto held = holds_.find(sandbox_id);
  if (held != holds_.end()) {
    // Another container of the same pod: the pod's devices, counted once.
    for (const auto& id : held->second.device_ids) {
      const auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                                   [&](const Device& d) { return d.id == id; });
      if (it == inventory.devices.end()) {
        throw AllocationError(AllocationError::Kind::kImpossible,
                              "GPU " + id + " held by this pod is no longer on the node");
      }
      r.devices.push_back(*it);
    }
    r.exclusive = held->second.exclusive;
    r.explanation = "the pod's GPUs: ";
    for (std::size_t i = 0; i < r.devices.size(); ++i) {
      r.explanation += (i ? ", " : "") + Name(r.devices[i]);
    }
    ++held->second.pending;
  } else {
    r.devices = Choose(inventory, request, r.explanation, r.considered);
    r.exclusive = request.exclusive;
    auto& hold = holds_[sandbox_id];
    for (const auto& d : r.devices) hold.device_ids.push_back(d.id);
    hold.exclusive = request.exclusive;
    hold.pending = 1;
  }
  r.id = next_reservation_++;
  reservations_[r.id] = sandbox_id;
  return r;
}

Reservation Allocator::ReserveAssigned(const std::vector<Device>& devices,
                                       const std::string& sandbox_id) {
  std::lock_guard lock(mutex_);
  Reservation r;
  r.devices = devices;
  std::vector<std::string> ids;
  for (const auto& d : devices) {
    ids.push_back(d.id);
    r.explanation += (r.explanation.empty() ? "assigned by kubelet: " : ", ") + Name(d);
  }
  auto& hold = holds_[sandbox_id];
  Merge(hold, ids, false);
  ++hold.pending;
  r.id = next_reservation_++;
  reservations_[r.id] = sandbox_id;
  return r;
}

// A pod's containers may each bring devices (kubelet assigns per container): the pod holds all.
void Allocator::Merge(Hold& hold, const std::vector<std::string>& ids, bool exclusive) {
  for (const auto& id : ids) {
    if (std::find(hold.device_ids.begin(), hold.device_ids.end(), id) == hold.device_ids.end()) {
      hold.device_ids.push_back(id);
    }
  }
  hold.exclusive = hold.exclusive || exclusive;
}

void Allocator::ApplyCommit(const std::string& sandbox, const std::vector<std::string>& ids,
                            bool exclusive) {
  auto& hold = holds_[sandbox];
  Merge(hold, ids, exclusive);
  hold.committed = true;
}

std::map<std::string, Allocator::Hold>::iterator Allocator::EndReservation(
    std::uint64_t reservation) {
  const auto it = reservations_.find(reservation);
  if (it == reservations_.end()) return holds_.end();
  const auto held = holds_.find(it->second);
  reservations_.erase(it);
  if (held != holds_.end() && held->second.pending > 0) --held->second.pending;
  return held;
}

void Allocator::Commit(std::uint64_t reservation) {
  std::lock_guard lock(mutex_);
  const auto held = EndReservation(reservation);
  if (held == holds_.end()) return;
  const std::string sandbox = held->first;
  auto& hold = held->second;
  if (hold.stopped) {
    // The sandbox was stopped while this CreateContainer was in flight: the container cannot
    // run, and the pod holds nothing.
    DropIfUnheld(sandbox);
    return;
  }
  hold.committed = true;
  if (resyncing_) {
    journal_.push_back(
        {JournalEntry::Type::kCommit, sandbox, held->second.device_ids, held->second.exclusive});
  }
}

void Allocator::DropIfUnheld(const std::string& sandbox_id) {
  const auto it = holds_.find(sandbox_id);
  if (it != holds_.end() && (!it->second.committed || it->second.stopped) &&
      it->second.pending == 0) {
    holds_.erase(it);
  }
}

void Allocator::Release(std::uint64_t reservation) {
  std::lock_guard lock(mutex_);
  const auto held = EndReservation(reservation);
  if (held == holds_.end()) return;
  DropIfUnheld(std::string(held->first));
}

void Allocator::ApplySandboxGone(const std::string& sandbox_id) {
  const auto held = holds_.find(sandbox_id);
  if (held == holds_.end()) return;
  held->second.stopped = true;
  DropIfUnheld(sandbox_id);  // kept only while a CreateContainer is in flight
}

void Allocator::SandboxGone(const std::string& sandbox_id) {
  std::lock_guard lock(mutex_);
  ApplySandboxGone(sandbox_id);
  if (resyncing_) journal_.push_back({JournalEntry::Type::kSandboxGone, sandbox_id, {}, false});
}

void Allocator::BeginResync() {
  std::lock_guard lock(mutex_);
  resyncing_ = true;
  journal_.clear();
}

bool HoldsDevices(const RuntimeRecord& runtime, const RecordedContainer& container) {
  return !container.exited || runtime.ready_sandboxes.count(container.sandbox_id) > 0;
}

ResyncOutcome Allocator::FinishResync(const RuntimeRecord& runtime) {
  std::lock_guard lock(mutex_);
  std::map<std::string, Hold> rebuilt;
  for (const auto& c : runtime.containers) {
    if (!HoldsDevices(runtime, c)) continue;
    auto& hold = rebuilt[c.sandbox_id];
    Merge(hold, c.device_ids, c.exclusive);
    hold.committed = true;
  }
  for (const auto& [sandbox, hold] : holds_) {
    const bool ready = runtime.ready_sandboxes.count(sandbox) > 0;
    // A committed hold of a ready sandbox whose containers were all removed: the pod still
    // lives, so it keeps its devices (only a restarted dxshim, which has no memory, loses it).
    const bool still_held = hold.committed && !hold.stopped && ready;
    // A CreateContainer in flight has not answered yet: its reservation stands.
    if (hold.pending == 0 && !still_held) continue;
    auto& target = rebuilt[sandbox];
    Merge(target, hold.device_ids, hold.exclusive);
    target.committed = target.committed || still_held;
    target.stopped = hold.stopped;
    target.pending = hold.pending;
  }
  std::set<std::string> before;
  for (const auto& [sandbox, hold] : holds_) {
    if (hold.committed && !hold.stopped) before.insert(sandbox);
  }
  const auto old = std::move(holds_);
  holds_ = std::move(rebuilt);
  for (const auto& e : journal_) {
    switch (e.type) {
      case JournalEntry::Type::kCommit:
        ApplyCommit(e.sandbox_id, e.device_ids, e.exclusive);
        break;
      case JournalEntry::Type::kSandboxGone:
        ApplySandboxGone(e.sandbox_id);
        break;
    }
  }
  journal_.clear();
  resyncing_ = false;
  synced_ = true;
  ResyncOutcome outcome;
  for (const auto& [sandbox, hold] : holds_) {
    if (hold.committed) ++outcome.holding;
  }
  for (const auto& sandbox : before) {
    if (holds_.count(sandbox) > 0) continue;
    outcome.freed.push_back({sandbox, old.at(sandbox).device_ids});
  }
  return outcome;
}

bool Allocator::synced() const {
  std::lock_guard lock(mutex_);
  return synced_;
}

}  // namespace dxshim::devices
