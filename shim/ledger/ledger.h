// Who holds which GPU. A pod (sandbox) holds its devices as one unit: every container of the pod
// in the request's scope sees the same devices and counts once, and the pod holds them from its
// first successful CreateContainer until its sandbox is stopped or removed, whatever its
// containers do meanwhile (crash loops, init containers, completed containers), as kubelet's
// device manager keeps a pod's devices until the pod is gone.
// The ledger has no file: it is rebuilt from the runtime record
// (shim/runtime_record/runtime_record.h) and kept
// current by what dxshim sees pass through (commit after a successful CreateContainer, release
// after a failed one, stopped and removed sandboxes).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "devices/allocation/allocation_policy.h"
#include "devices/allocation/device_request.h"
#include "devices/allocation/placement.h"
#include "devices/device.h"
#include "shim/runtime_record/runtime_record.h"

namespace dxshim {

// What choosing reads from the ledger, at once: every device's use (who holds it, with what),
// and whether the ledger has been read from the runtime yet.
struct LedgerView {
  devices::Usage usage;
  bool synced = false;
  // By sandbox id: the memory units each pod holds (devices::Placed::memory_units), for pods that
  // hold any.
  std::map<std::string, std::set<std::string>> memory_units;
};

// A pod's hold as the metrics show it (shim/ledger/holding_collector.h): who holds which GPUs.
struct PodHolding {
  std::string pod_namespace;  // empty when the pod is not known by name
  std::string pod;            // its name, or its sandbox id when not known by name
  // Names of its containers created with the GPUs (CRI metadata names), sorted; empty when none
  // is known by name.
  std::vector<std::string> containers;
  std::vector<std::string> device_ids;
  // In device_ids' order: the bytes it asked there, nullopt for the default as configured now.
  std::vector<std::optional<std::uint64_t>> memory;
  bool exclusive = false;
};

// What a resync changed, for the log.
struct ResyncOutcome {
  std::size_t holding = 0;  // sandboxes holding devices afterwards
  // Holds the runtime no longer backs: their sandbox stopped or went away without dxshim seeing
  // the call.
  struct Freed {
    std::string sandbox_id;
    std::vector<std::string> device_ids;
  };
  std::vector<Freed> freed;
};

class Ledger {
 public:
  explicit Ledger(devices::AllocationPolicy policy);

  // Holds `placed` (devices::Choose, Held or Assigned over View()'s usage) for `sandbox_id` until
  // Commit or Release of the reservation id it returns: the one way a choice enters the ledger.
  // Devices kubelet assigned are never refused; another choice is held only if it is still good
  // now, else nullopt, and the caller chooses again from a new View(): the ledger changed in
  // between (a resync rebuilt it), and the pod now holds devices of its own, no longer holds the
  // ones it was given again (or holds them otherwise, or holds memory units the choice did not
  // see), or a chosen device lost the room it had, or the memory a held pod's reservation grows
  // by (its container brought memory units the pod did not hold) is no longer free. A growth is
  // undone when its reservation is released.
  // `pod` ("namespace/name") names the holder in other pods' refusals; `container` (its CRI
  // metadata name) joins the pod's holders in metrics once committed.
  std::optional<std::uint64_t> Hold(const devices::Placed& placed, const std::string& sandbox_id,
                                    const std::string& pod = "", const std::string& container = "");

  // The reservation's CreateContainer succeeded: the pod now holds its devices until its sandbox
  // is gone. A sandbox stopped while the call was in flight keeps nothing.
  void Commit(std::uint64_t reservation);
  void Release(std::uint64_t reservation);
  // The sandbox was stopped or removed: its devices are free (a CreateContainer of it still in
  // flight releases, and cannot commit).
  void SandboxGone(const std::string& sandbox_id);

  // Rebuilding from the runtime without losing what happens meanwhile: BeginResync() before
  // listing the runtime's sandboxes and containers, FinishResync() with what they said.
  // Reservations in flight are kept, and so are committed holds of sandboxes still ready whose
  // containers were all removed (the record in the runtime is gone, the pod is not); commits and
  // stops seen in between are replayed.
  void BeginResync();
  ResyncOutcome FinishResync(const RuntimeRecord& runtime);
  bool synced() const;

  devices::Usage Usage() const;
  LedgerView View() const;
  // The committed holds (what pods hold now; reservations in flight are not shown), by sandbox
  // id.
  std::vector<PodHolding> Holdings() const;
  const devices::AllocationPolicy& policy() const { return policy_; }

 private:
  struct HoldRecord {
    std::vector<std::string> device_ids;
    // In device_ids' order: the bytes reserved there, nullopt for a hold recorded before memory
    // was counted (it counts as the default).
    std::vector<std::optional<std::uint64_t>> memory;
    // The memory units the pod holds (devices::Placed::memory_units): its reservation counts each
    // once, however many of its containers were given it.
    std::set<std::string> memory_units;
    std::string pod;                   // "namespace/name"; empty when not known
    std::set<std::string> containers;  // names of its containers committed with the devices
    bool exclusive = false;
    bool committed = false;  // a CreateContainer succeeded: held until the sandbox is gone
    bool stopped = false;    // the sandbox went away with calls in flight: nothing commits
    unsigned pending = 0;    // CreateContainer calls in flight
  };
  struct JournalEntry {
    enum class Type { kCommit, kSandboxGone } type;
    std::string sandbox_id;
    HoldRecord hold;  // kCommit: what was committed
  };

  devices::Usage UsageLocked() const;
  // When `hold` is what `placed` (the pod's devices again, with ids `ids`) was read from, the
  // memory the hold takes on each device once `placed` is held: as it is, or grown where `placed`
  // brings memory units the pod does not hold yet and the growth is free now. nullopt otherwise.
  std::optional<std::vector<std::optional<std::uint64_t>>> HeldAgain(
      const HoldRecord& hold, const devices::Placed& placed,
      const std::vector<std::string>& ids) const;
  // Adds `from`'s devices and memory units that `hold` does not have yet; where both reserved
  // memory on a device, the hold keeps the larger (a pod's reservation only grows while it lives:
  // its containers' records each say what it held after that container).
  static void Merge(HoldRecord& hold, const HoldRecord& from);
  void ApplyCommit(const std::string& sandbox, const HoldRecord& committed);
  void ApplySandboxGone(const std::string& sandbox_id);
  void DropIfUnheld(const std::string& sandbox_id);
  // A reservation in flight: whose, for which container, and how it grew the pod's hold.
  struct Pending {
    std::string sandbox_id;
    std::string container;
    std::set<std::string> added_units;  // memory units the pod did not hold before
    // The hold's memory before and after (both empty when it did not change).
    std::vector<std::optional<std::uint64_t>> memory_before;
    std::vector<std::optional<std::uint64_t>> memory_after;
  };
  // Ends `reservation` (one fewer pending on its sandbox's hold): that hold, or holds_.end() when
  // the reservation or the hold is gone; `ended` is set to what the reservation was.
  std::map<std::string, HoldRecord>::iterator EndReservation(std::uint64_t reservation,
                                                             Pending* ended = nullptr);
  // A released reservation's growth of `hold` goes, if the hold is as it left it.
  static void UndoGrowth(HoldRecord& hold, const Pending& ended);
  // The holds the runtime record backs, plus this ledger's reservations in flight and committed
  // holds of sandboxes still ready.
  std::map<std::string, HoldRecord> Rebuilt(const RuntimeRecord& runtime) const;

  const devices::AllocationPolicy policy_;
  mutable std::mutex mutex_;
  std::map<std::string, HoldRecord> holds_;        // by sandbox id
  std::map<std::uint64_t, Pending> reservations_;  // by reservation id
  std::uint64_t next_reservation_ = 1;
  bool resyncing_ = false;
  bool synced_ = false;
  std::vector<JournalEntry> journal_;
};

}  // namespace dxshim
