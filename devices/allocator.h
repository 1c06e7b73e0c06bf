// Which devices a pod gets, and who holds what. A pod (sandbox) holds its devices as one unit:
// every container of the pod in the request's scope sees the same devices and counts once.
// The ledger has no file: it is rebuilt from the runtime (containers carry the dxshim.io/devices
// label) and kept current by what dxshim sees pass through (commit after a successful
// CreateContainer, release after a failed one, removal of containers and pods).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices/allocation_policy.h"
#include "devices/device.h"
#include "devices/device_request.h"
#include "devices/device_source.h"

namespace dxshim::devices {

class AllocationError : public std::runtime_error {
 public:
  enum class Kind {
    kImpossible,  // no device on this node can ever satisfy the request (FAILED_PRECONDITION)
    kExhausted,   // devices exist but are in use now (RESOURCE_EXHAUSTED)
  };
  AllocationError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct Reservation {
  std::uint64_t id = 0;
  std::vector<Device> devices;
  bool exclusive = false;
  std::string explanation;  // one line: what was chosen and why
  // One line per inventory device: chosen, matching but not chosen (and why), or why not
  // matching. Empty when the pod's earlier choice was reused.
  std::vector<std::string> considered;
};

// A container as the runtime lists it, with what its labels say it holds.
struct RecordedContainer {
  std::string container_id;
  std::string sandbox_id;
  std::vector<std::string> device_ids;
  bool exclusive = false;
};

struct DeviceUsage {
  unsigned pods = 0;  // pods holding the device
  bool exclusive = false;
};

class Allocator {
 public:
  explicit Allocator(AllocationPolicy policy);

  // Chooses devices for `sandbox_id` and reserves them until Commit or Release. A pod that
  // already holds devices gets the same ones again. Throws AllocationError.
  Reservation Reserve(const Inventory& inventory, const DeviceRequest& request,
                      const std::string& sandbox_id);
  // Records devices someone else chose (a device plugin put them into the config): never
  // refused, but counted, so that dxshim does not hand them out beyond their capacity.
  Reservation ReserveAssigned(const std::vector<Device>& devices, const std::string& sandbox_id);

  void Commit(std::uint64_t reservation, const std::string& container_id);
  void Release(std::uint64_t reservation);
  void ContainerGone(const std::string& container_id);
  void SandboxGone(const std::string& sandbox_id);

  // Rebuilding from the runtime without losing what happens meanwhile: BeginResync() before
  // listing the runtime's containers, FinishResync() with the running and created ones.
  // Reservations in flight are kept; commits and removals seen in between are replayed.
  void BeginResync();
  void FinishResync(const std::vector<RecordedContainer>& live);
  bool synced() const;

  std::map<std::string, DeviceUsage> Usage() const;
  const AllocationPolicy& policy() const { return policy_; }

 private:
  struct Hold {
    std::vector<std::string> device_ids;
    bool exclusive = false;
    std::set<std::string> containers;
    unsigned pending = 0;
  };
  struct JournalEntry {
    enum class Type { kCommit, kContainerGone, kSandboxGone } type;
    std::string container_id;
    std::string sandbox_id;
    std::vector<std::string> device_ids;
    bool exclusive = false;
  };

  std::map<std::string, DeviceUsage> UsageLocked() const;
  std::vector<Device> Choose(const Inventory& inventory, const DeviceRequest& request,
                             std::string& explanation, std::vector<std::string>& considered) const;
  void ApplyCommit(const std::string& sandbox, const std::string& container,
                   const std::vector<std::string>& ids, bool exclusive);
  void ApplyContainerGone(const std::string& container_id);
  void ApplySandboxGone(const std::string& sandbox_id);
  void DropIfEmpty(const std::string& sandbox_id);

  const AllocationPolicy policy_;
  mutable std::mutex mutex_;
  std::map<std::string, Hold> holds_;  // by sandbox id
  std::map<std::string, std::string> container_sandbox_;
  std::map<std::uint64_t, std::string> reservations_;  // id -> sandbox id
  std::uint64_t next_reservation_ = 1;
  bool resyncing_ = false;
  bool synced_ = false;
  std::vector<JournalEntry> journal_;
};

}  // namespace dxshim::devices
