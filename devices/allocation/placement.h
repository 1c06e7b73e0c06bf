// Which devices a request gets, given what is in use: a pure choice over the inventory, the
// current usage and the operator's policy. It holds nothing; the ledger (shim/ledger) calls it
// under its own lock and records the result.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices/allocation/allocation_policy.h"
#include "devices/allocation/device_request.h"
#include "devices/device.h"
#include "devices/device_source.h"

namespace dxshim::devices {

class AllocationError : public std::runtime_error {
 public:
  enum class Kind {
    kImpossible,  // no device on this node can ever satisfy the request (FAILED_PRECONDITION)
    // Enough devices match, but not enough of one vendor and driver: dxshim never mixes them in
    // a container (FAILED_PRECONDITION).
    kVendorMix,
    kExhausted,  // devices exist but are in use now (RESOURCE_EXHAUSTED)
    // A GPU would have a pod slot free, but not the memory the request reserves next to what is
    // reserved on it now (RESOURCE_EXHAUSTED).
    kMemoryExhausted,
    // The memory asked for is more than any matching GPU has to share (FAILED_PRECONDITION).
    kMemoryTooLarge,
  };
  AllocationError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// A pod holding a device: its name and what it reserved there (nullopt: the default, its hold
// was recorded before memory was counted), for messages, and which sandbox holds it in which
// place, so that the pod's next container gets the same devices in the same order (Held).
struct DeviceHolder {
  std::string pod;  // "namespace/name", or the sandbox id when the name is not known
  std::optional<std::uint64_t> memory;
  bool exclusive = false;  // holds the whole device
  std::string sandbox_id;
  std::size_t index = 0;  // the device's place among the sandbox's devices
  bool operator==(const DeviceHolder&) const = default;
};

// How a device is used now.
struct DeviceUsage {
  unsigned pods = 0;  // pods holding the device
  bool exclusive = false;
  std::uint64_t memory = 0;  // bytes the holders recorded
  unsigned unrecorded = 0;   // holders that recorded none: each counts the default
  std::vector<DeviceHolder> holders;
};
using Usage = std::map<std::string, DeviceUsage>;  // by device id

// Bytes reserved on `d` by `usage`: all of its capacity when an exclusive pod holds it, else what
// its holders recorded plus the default for each that recorded nothing (gpu_memory.h).
std::uint64_t ReservedOn(const Device& d, const DeviceUsage& usage, const AllocationPolicy& policy);

// Whether one more pod (exclusive or not) may join the holders of a device used as `u`: an
// exclusive pod needs it unheld; a shared one a slot under max_containers_per_device and no
// exclusive holder.
bool PodRoom(const DeviceUsage& u, bool exclusive, const AllocationPolicy& policy);

// Bytes of `d`'s capacity not reserved under `u`.
std::uint64_t FreeOn(const Device& d, const DeviceUsage& u, const AllocationPolicy& policy);

// What a pod is given: the devices, chosen (Choose), the ones it already holds again (Held), or
// the ones kubelet assigned (Assigned). It holds nothing; the ledger holds it (shim/ledger).
struct Placed {
  enum class Source {
    kChosen,    // chosen now from the usage: held only if it still fits when it is held
    kHeld,      // the pod's devices again: another container of the same pod
    kAssigned,  // a device plugin's choice kubelet put into the config: never refused
  };
  Source source = Source::kChosen;
  std::vector<Device> devices;
  std::vector<std::uint64_t> memory;  // bytes reserved on each of `devices`
  bool exclusive = false;             // the pod holds its devices alone
  // Whether the pod asked that amount (else it is the default as configured now, or the whole
  // GPU for an exclusive pod): only an amount asked is recorded on the container.
  bool memory_asked = false;
  // The memory units the pod holds once this is held: the dxshim.io/plugin-memory-units ids kubelet
  // gave its containers so far, this one's included. A pod reserves each id once, however many of
  // its containers name it (kubelet gives an init container's ids again to the containers after
  // it), so the ledger keeps the ids, not a count (shim/ledger/ledger.h).
  std::set<std::string> memory_units;
  std::string explanation;  // one line: what was chosen and why
  // One line per inventory device: chosen, matching but not chosen (and why), or why not
  // matching. Empty unless chosen now.
  std::vector<std::string> considered;
};

// Chooses `request.count` devices of one vendor and driver that match the request and have room
// under `policy`: a pod slot (max_containers_per_device; an exclusive pod needs the device
// unheld) and the memory the request reserves on each (request.gpu_memory, else the default;
// an exclusive pod the whole capacity). `spread` prefers the devices with the most free memory,
// ties to fewer pods; `pack` the least free memory that still fits, ties to more pods; then
// inventory order. Throws AllocationError naming the request and why nothing fits.
Placed Choose(const Inventory& inventory, const Usage& usage, const DeviceRequest& request,
              const AllocationPolicy& policy);

// The devices the pod of `sandbox_id` holds in `usage`, again, in the order it holds them, with
// what it reserved there: every container of a pod sees the same devices, counted once. nullopt
// when it holds none. Throws AllocationError (kImpossible) when one of them left `inventory`.
std::optional<Placed> Held(const Inventory& inventory, const Usage& usage,
                           const std::string& sandbox_id, const AllocationPolicy& policy);

// `held` (Held: the pod's devices again) with the pod's reservation raised to `memory` bytes on
// each device where it holds less: another of its containers brought memory units the pod did not
// hold yet. `adds` says what the container adds, for the explanation and the refusal. Throws
// AllocationError (kMemoryExhausted) naming each device's use when a device has not the growth
// free now. An exclusive pod holds its devices' whole capacity already: `held` as it is.
Placed GrowHeld(Placed held, const Usage& usage, std::uint64_t memory, const std::string& adds,
                const AllocationPolicy& policy);

// Bytes per GPU that `units` memory units of policy.gpu_memory_unit reserve spread evenly over
// `gpus` GPUs (rounded down; callers refuse counts that do not divide).
std::uint64_t MemoryOfUnits(std::size_t units, std::size_t gpus, const AllocationPolicy& policy);

// Devices kubelet assigned (a device plugin put them into the config), each with the default
// memory: never refused, but counted once held.
Placed Assigned(const std::vector<Device>& devices, const AllocationPolicy& policy);

// Whether `placed`, chosen from an earlier usage, still has room under `usage` (a pod slot and
// its memory on each device): what the ledger checks when it holds a choice.
bool StillFits(const Placed& placed, const Usage& usage, const AllocationPolicy& policy);

// "<description> [<location path>]": how messages name a device.
std::string DeviceName(const Device& d);

}  // namespace dxshim::devices
