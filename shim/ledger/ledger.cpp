#include "shim/ledger/ledger.h"

#include <algorithm>
#include <set>

#include "devices/allocation/gpu_memory.h"

namespace dxshim {

Ledger::Ledger(devices::AllocationPolicy policy) : policy_(std::move(policy)) {}

devices::Usage Ledger::UsageLocked() const {
  devices::Usage usage;
  for (const auto& [sandbox, hold] : holds_) {
    for (std::size_t i = 0; i < hold.device_ids.size(); ++i) {
      auto& u = usage[hold.device_ids[i]];
      ++u.pods;
      u.exclusive = u.exclusive || hold.exclusive;
      const auto memory = i < hold.memory.size() ? hold.memory[i] : std::nullopt;
      if (memory) {
        u.memory += *memory;
      } else {
        ++u.unrecorded;
      }
      u.holders.push_back({hold.pod.empty() ? sandbox : hold.pod, memory, hold.exclusive});
    }
  }
  for (auto& [id, u] : usage) {
    std::sort(u.holders.begin(), u.holders.end(),
              [](const auto& a, const auto& b) { return a.pod < b.pod; });
  }
  return usage;
}

devices::Usage Ledger::Usage() const {
  std::lock_guard lock(mutex_);
  return UsageLocked();
}

std::vector<PodHolding> Ledger::Holdings() const {
  std::lock_guard lock(mutex_);
  std::vector<PodHolding> out;
  for (const auto& [sandbox, hold] : holds_) {
    if (!hold.committed || hold.stopped) continue;
    PodHolding h;
    // "namespace/name": a namespace is a DNS label, so the first '/' splits them.
    const auto slash = hold.pod.find('/');
    if (slash == std::string::npos) {
      h.pod = hold.pod.empty() ? sandbox : hold.pod;
    } else {
      h.pod_namespace = hold.pod.substr(0, slash);
      h.pod = hold.pod.substr(slash + 1);
    }
    h.containers.assign(hold.containers.begin(), hold.containers.end());
    h.device_ids = hold.device_ids;
    h.memory = hold.memory;
    h.memory.resize(h.device_ids.size());
    h.exclusive = hold.exclusive;
    out.push_back(std::move(h));
  }
  return out;
}

Reservation Ledger::ReuseHold(const devices::Inventory& inventory, Hold& hold) const {
  Reservation r;
  for (const auto& id : hold.device_ids) {
    const auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                                 [&](const devices::Device& d) { return d.id == id; });
    if (it == inventory.devices.end()) {
      throw devices::AllocationError(devices::AllocationError::Kind::kImpossible,
                                     "GPU " + id + " held by this pod is no longer on the node");
    }
    r.devices.push_back(*it);
    const auto i = r.devices.size() - 1;
    const auto recorded = i < hold.memory.size() ? hold.memory[i] : std::nullopt;
    r.memory.push_back(devices::HeldGpuMemory(*it, recorded, hold.exclusive, policy_));
    r.memory_asked = r.memory_asked || (recorded && !hold.exclusive);
  }
  r.exclusive = hold.exclusive;
  r.explanation = "the pod's GPUs: ";
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    r.explanation += (i ? ", " : "") + devices::DeviceName(r.devices[i]);
  }
  ++hold.pending;
  return r;
}

std::uint64_t Ledger::Register(Reservation& r, const std::string& sandbox_id,
                               const std::string& container) {
  r.id = next_reservation_++;
  reservations_[r.id] = {sandbox_id, container};
  return r.id;
}

Reservation Ledger::Reserve(const devices::Inventory& inventory,
                            const devices::DeviceRequest& request, const std::string& sandbox_id,
                            const std::string& pod, const std::string& container) {
  std::lock_guard lock(mutex_);
  Reservation r;
  auto held = holds_.find(sandbox_id);
  if (held != holds_.end()) {
    r = ReuseHold(inventory, held->second);
  } else {
    auto placed = devices::Choose(inventory, UsageLocked(), request, policy_);
    r.devices = std::move(placed.devices);
    r.memory = std::move(placed.memory);
    r.explanation = std::move(placed.explanation);
    r.considered = std::move(placed.considered);
    r.exclusive = request.exclusive;
    r.memory_asked = request.gpu_memory != 0 && !request.exclusive;
    auto& hold = holds_[sandbox_id];
    for (std::size_t i = 0; i < r.devices.size(); ++i) {
      hold.device_ids.push_back(r.devices[i].id);
      // The default is not pinned: it follows the configuration.
      hold.memory.push_back(r.memory_asked ? std::optional(r.memory[i]) : std::nullopt);
    }
    hold.pod = pod;
    hold.exclusive = request.exclusive;
    hold.pending = 1;
  }
  Register(r, sandbox_id, container);
  return r;
}

Reservation Ledger::ReserveAssigned(const std::vector<devices::Device>& devices,
                                    const std::string& sandbox_id, const std::string& pod,
                                    const std::string& container) {
  std::lock_guard lock(mutex_);
  Reservation r;
  r.devices = devices;
  Hold assigned;
  for (const auto& d : devices) {
    assigned.device_ids.push_back(d.id);
    r.memory.push_back(devices::DefaultGpuMemory(d, policy_));
    assigned.memory.emplace_back(std::nullopt);
    r.explanation +=
        (r.explanation.empty() ? "assigned by kubelet: " : ", ") + devices::DeviceName(d);
  }
  auto& hold = holds_[sandbox_id];
  Merge(hold, assigned);
  if (hold.pod.empty()) hold.pod = pod;
  ++hold.pending;
  Register(r, sandbox_id, container);
  return r;
}

// A pod's containers may each bring devices (kubelet assigns per container): the pod holds all.
void Ledger::Merge(Hold& hold, const Hold& from) {
  hold.memory.resize(hold.device_ids.size());
  for (std::size_t i = 0; i < from.device_ids.size(); ++i) {
    const auto& id = from.device_ids[i];
    const auto memory = i < from.memory.size() ? from.memory[i] : std::nullopt;
    const auto it = std::find(hold.device_ids.begin(), hold.device_ids.end(), id);
    if (it == hold.device_ids.end()) {
      hold.device_ids.push_back(id);
      hold.memory.push_back(memory);
    } else if (auto& held = hold.memory[static_cast<std::size_t>(it - hold.device_ids.begin())];
               !held) {
      held = memory;
    }
  }
  if (hold.pod.empty()) hold.pod = from.pod;
  hold.containers.insert(from.containers.begin(), from.containers.end());
  hold.exclusive = hold.exclusive || from.exclusive;
}

void Ledger::ApplyCommit(const std::string& sandbox, const Hold& committed) {
  auto& hold = holds_[sandbox];
  Merge(hold, committed);
  hold.committed = true;
}

std::map<std::string, Ledger::Hold>::iterator Ledger::EndReservation(std::uint64_t reservation,
                                                                     std::string* container) {
  const auto it = reservations_.find(reservation);
  if (it == reservations_.end()) return holds_.end();
  const auto held = holds_.find(it->second.sandbox_id);
  if (container != nullptr) *container = std::move(it->second.container);
  reservations_.erase(it);
  if (held != holds_.end() && held->second.pending > 0) --held->second.pending;
  return held;
}

void Ledger::Commit(std::uint64_t reservation) {
  std::lock_guard lock(mutex_);
  std::string container;
  const auto held = EndReservation(reservation, &container);
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
  if (!container.empty()) hold.containers.insert(std::move(container));
  if (resyncing_) {
    journal_.push_back({JournalEntry::Type::kCommit, sandbox, held->second});
  }
}

void Ledger::DropIfUnheld(const std::string& sandbox_id) {
  const auto it = holds_.find(sandbox_id);
  if (it != holds_.end() && (!it->second.committed || it->second.stopped) &&
      it->second.pending == 0) {
    holds_.erase(it);
  }
}

void Ledger::Release(std::uint64_t reservation) {
  std::lock_guard lock(mutex_);
  const auto held = EndReservation(reservation);
  if (held == holds_.end()) return;
  DropIfUnheld(std::string(held->first));
}

void Ledger::ApplySandboxGone(const std::string& sandbox_id) {
  const auto held = holds_.find(sandbox_id);
  if (held == holds_.end()) return;
  held->second.stopped = true;
  DropIfUnheld(sandbox_id);  // kept only while a CreateContainer is in flight
}

void Ledger::SandboxGone(const std::string& sandbox_id) {
  std::lock_guard lock(mutex_);
  ApplySandboxGone(sandbox_id);
  if (resyncing_) journal_.push_back({JournalEntry::Type::kSandboxGone, sandbox_id, {}});
}

void Ledger::BeginResync() {
  std::lock_guard lock(mutex_);
  resyncing_ = true;
  journal_.clear();
}

std::map<std::string, Ledger::Hold> Ledger::Rebuilt(const RuntimeRecord& runtime) const {
  std::map<std::string, Hold> rebuilt;
  for (const auto& c : runtime.containers) {
    if (!HoldsDevices(runtime, c)) continue;
    Hold recorded;
    recorded.device_ids = c.device_ids;
    for (std::size_t i = 0; i < c.device_ids.size(); ++i) recorded.memory.push_back(c.MemoryOn(i));
    recorded.exclusive = c.exclusive;
    if (!c.name.empty()) recorded.containers.insert(c.name);
    const auto name = runtime.pod_names.find(c.sandbox_id);
    if (name != runtime.pod_names.end()) recorded.pod = name->second;
    auto& hold = rebuilt[c.sandbox_id];
    Merge(hold, recorded);
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
    Merge(target, hold);
    target.committed = target.committed || still_held;
    target.stopped = hold.stopped;
    target.pending = hold.pending;
  }
  return rebuilt;
}

ResyncOutcome Ledger::FinishResync(const RuntimeRecord& runtime) {
  std::lock_guard lock(mutex_);
  std::set<std::string> before;
  for (const auto& [sandbox, hold] : holds_) {
    if (hold.committed && !hold.stopped) before.insert(sandbox);
  }
  auto rebuilt = Rebuilt(runtime);
  const auto old = std::move(holds_);
  holds_ = std::move(rebuilt);
  for (const auto& e : journal_) {
    switch (e.type) {
      case JournalEntry::Type::kCommit:
        ApplyCommit(e.sandbox_id, e.hold);
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

bool Ledger::synced() const {
  std::lock_guard lock(mutex_);
  return synced_;
}

}  // namespace dxshim
