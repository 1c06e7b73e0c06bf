// Which devices a request gets, given what is in use: a pure choice over the inventory, the
// current usage and the operator's policy. It holds nothing; the ledger (shim/ledger) calls it
// under its own lock and records the result.
#pragma once

#include <map>
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
  };
  AllocationError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// How a device is used now.
struct DeviceUsage {
  unsigned pods = 0;  // pods holding the device
  bool exclusive = false;
};
using Usage = std::map<std::string, DeviceUsage>;  // by device id

struct Placed {
  std::vector<Device> devices;
  std::string explanation;  // one line: what was chosen and why
  // One line per inventory device: chosen, matching but not chosen (and why), or why not
  // matching.
  std::vector<std::string> considered;
};

// Chooses `request.count` devices of one vendor and driver that match the request and have room
// under `policy`, preferring by `policy.placement`; ties go to inventory order. Throws
// AllocationError naming the request and why nothing fits.
Placed Choose(const Inventory& inventory, const Usage& usage, const DeviceRequest& request,
              const AllocationPolicy& policy);

// "<description> [<location path>]": how messages name a device.
std::string DeviceName(const Device& d);

}  // namespace dxshim::devices
