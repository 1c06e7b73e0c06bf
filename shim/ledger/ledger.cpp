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
      u.holders.push_back(
          {hold.pod.empty() ? sandbox : hold.pod, memory, hold.exclusive, sandbox, i});
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

LedgerView Ledger::View() const {
  std::lock_guard lock(mutex_);
  LedgerView view{UsageLocked(), synced_, {}};
  for (const auto& [sandbox, hold] : holds_) {
    if (!hold.memory_units.empty()) view.memory_units.emplace(sandbox, hold.memory_units);
  }
  return view;
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

std::optional<std::uint64_t> Ledger::Hold(const devices::Placed& placed,
                                          const std::string& sandbox_id, const std::string& pod,
                                          const std::string& container) {
  std::lock_guard lock(mutex_);
  auto held = holds_.find(sandbox_id);
  // A hold without devices (a record whose label named none) holds nothing.
  if (held != holds_.end() && held->second.device_ids.empty() && held->second.pending == 0) {
    holds_.erase(held);
    held = holds_.end();
  }
  std::vector<std::string> ids;
  for (const auto& d : placed.devices) ids.push_back(d.id);
  Pending pending{sandbox_id, container, {}, {}, {}};
  switch (placed.source) {
    case devices::Placed::Source::kAssigned: {
      HoldRecord assigned;
      assigned.device_ids = ids;
      assigned.memory.resize(ids.size());  // each counts the default
      assigned.memory_units = placed.memory_units;
      auto& hold = holds_[sandbox_id];
      Merge(hold, assigned);
      if (hold.pod.empty()) hold.pod = pod;
      ++hold.pending;
      break;
    }
    case devices::Placed::Source::kHeld: {
      if (held == holds_.end()) return std::nullopt;
      auto memory = HeldAgain(held->second, placed, ids);
      if (!memory) return std::nullopt;
      auto& hold = held->second;
      for (const auto& unit : placed.memory_units) {
        if (hold.memory_units.insert(unit).second) pending.added_units.insert(unit);
      }
      if (*memory != hold.memory) {
        pending.memory_before = std::move(hold.memory);
        pending.memory_after = *memory;
        hold.memory = std::move(*memory);
      }
      ++hold.pending;
      break;
    }
    case devices::Placed::Source::kChosen: {
      if (held != holds_.end() || !devices::StillFits(placed, UsageLocked(), policy_)) {
        return std::nullopt;
      }
      auto& hold = holds_[sandbox_id];
      hold.device_ids = ids;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        // The default is not pinned: it follows the configuration.
        hold.memory.push_back(placed.memory_asked ? std::optional(placed.memory.at(i))
                                                  : std::nullopt);
      }
      hold.memory_units = placed.memory_units;
      hold.pod = pod;
      hold.exclusive = placed.exclusive;
      hold.pending = 1;
      break;
    }
  }
  const auto id = next_reservation_++;
  reservations_[id] = std::move(pending);
  return id;
}

std::optional<std::vector<std::optional<std::uint64_t>>> Ledger::HeldAgain(
    const HoldRecord& hold, const devices::Placed& placed,
    const std::vector<std::string>& ids) const {
  if (hold.device_ids != ids || hold.exclusive != placed.exclusive) return std::nullopt;
  // The choice saw every memory unit the pod holds (one of its other containers may have added
  // some since: its reservation would then be short of them).
  if (!std::includes(placed.memory_units.begin(), placed.memory_units.end(),
                     hold.memory_units.begin(), hold.memory_units.end())) {
    return std::nullopt;
  }
  auto memory = hold.memory;
  memory.resize(ids.size());
  if (hold.exclusive) return memory;  // the whole capacity: nothing grows
  // The rule the choice applied (container_decision.cpp): new memory units grow the reservation
  // to all of the pod's units spread over its GPUs, never below what it holds.
  const bool grows = placed.memory_units.size() > hold.memory_units.size();
  const auto of_units = devices::MemoryOfUnits(placed.memory_units.size(), ids.size(), policy_);
  std::optional<devices::Usage> usage;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto& d = placed.devices[i];
    const auto now = devices::HeldGpuMemory(d, memory[i], false, policy_);
    const auto want = grows ? std::max(now, of_units) : now;
    // What the pod holds there, grown as the rule says, is what the choice reserved.
    if (i >= placed.memory.size() || placed.memory[i] != want) return std::nullopt;
    if (want == now) continue;
    // Growth: re-checked under the lock, as StillFits does for a choice.
    if (!usage) usage = UsageLocked();
    const auto it = usage->find(d.id);
    if (it == usage->end() || want - now > devices::FreeOn(d, it->second, policy_)) {
      return std::nullopt;
    }
    memory[i] = want;
  }
  return memory;
}

void Ledger::UndoGrowth(HoldRecord& hold, const Pending& ended) {
  // Only a hold as this reservation left it: had another of the pod's containers grown it since
  // (on top of these units), that one was told the larger reservation, which then stays.
  if (hold.memory != ended.memory_after && !ended.memory_after.empty()) return;
  if (!std::includes(hold.memory_units.begin(), hold.memory_units.end(), ended.added_units.begin(),
                     ended.added_units.end())) {
    return;
  }
  for (const auto& unit : ended.added_units) hold.memory_units.erase(unit);
  if (!ended.memory_after.empty()) hold.memory = ended.memory_before;
}

// A pod's containers may each bring devices (kubelet assigns per container): the pod holds all.
// Each container's record says what the pod reserved after that container, so the largest is
// what it holds now.
void Ledger::Merge(HoldRecord& hold, const HoldRecord& from) {
  hold.memory.resize(hold.device_ids.size());
  for (std::size_t i = 0; i < from.device_ids.size(); ++i) {
    const auto& id = from.device_ids[i];
    const auto memory = i < from.memory.size() ? from.memory[i] : std::nullopt;
    const auto it = std::find(hold.device_ids.begin(), hold.device_ids.end(), id);
    if (it == hold.device_ids.end()) {
      hold.device_ids.push_back(id);
      hold.memory.push_back(memory);
    } else if (auto& held = hold.memory[static_cast<std::size_t>(it - hold.device_ids.begin())];
               memory && (!held || *memory > *held)) {
      held = memory;
    }
  }
  hold.memory_units.insert(from.memory_units.begin(), from.memory_units.end());
  if (hold.pod.empty()) hold.pod = from.pod;
  hold.containers.insert(from.containers.begin(), from.containers.end());
  hold.exclusive = hold.exclusive || from.exclusive;
}

void Ledger::ApplyCommit(const std::string& sandbox, const HoldRecord& committed) {
  auto& hold = holds_[sandbox];
  Merge(hold, committed);
  hold.committed = true;
}

std::map<std::string, Ledger::HoldRecord>::iterator Ledger::EndReservation(
    std::uint64_t reservation, Pending* ended) {
  const auto it = reservations_.find(reservation);
  if (it == reservations_.end()) return holds_.end();
  const auto held = holds_.find(it->second.sandbox_id);
  if (ended != nullptr) *ended = std::move(it->second);
  reservations_.erase(it);
  if (held != holds_.end() && held->second.pending > 0) --held->second.pending;
  return held;
}

void Ledger::Commit(std::uint64_t reservation) {
  std::lock_guard lock(mutex_);
  Pending ended;
  const auto held = EndReservation(reservation, &ended);
  auto& container = ended.container;
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
  Pending ended;
  const auto held = EndReservation(reservation, &ended);
  if (held == holds_.end()) return;
  UndoGrowth(held->second, ended);
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

std::map<std::string, Ledger::HoldRecord> Ledger::Rebuilt(const RuntimeRecord& runtime) const {
  std::map<std::string, HoldRecord> rebuilt;
  for (const auto& c : runtime.containers) {
    if (!HoldsDevices(runtime, c)) continue;
    HoldRecord recorded;
    recorded.device_ids = c.device_ids;
    for (std::size_t i = 0; i < c.device_ids.size(); ++i) recorded.memory.push_back(c.MemoryOn(i));
    recorded.memory_units.insert(c.plugin_memory_units.begin(), c.plugin_memory_units.end());
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
