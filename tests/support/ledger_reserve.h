// A pod's devices chosen and held at once, as `dxshim serve` does it on a CreateContainer
// (shim/gpu/gpu_interceptor.cpp: the pod's devices again, else a choice over the ledger's usage,
// then Ledger::Hold), for tests and benchmarks that fill a ledger.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "devices/allocation/placement.h"
#include "shim/ledger/ledger.h"

namespace dxshim::test {

// A choice and the id the ledger holds it under.
struct Reservation {
  std::uint64_t id = 0;
  devices::Placed placed;
};

// Chooses again when another thread held in between (a bounded number of times; then
// std::logic_error). Throws devices::AllocationError as the choice does.
Reservation Reserve(Ledger& ledger, const devices::Inventory& inventory,
                    const devices::DeviceRequest& request, const std::string& sandbox_id,
                    const std::string& pod = "", const std::string& container = "");
// Devices kubelet assigned, held (never refused; std::logic_error if the ledger did).
Reservation ReserveAssigned(Ledger& ledger, const std::vector<devices::Device>& devices,
                            const std::string& sandbox_id, const std::string& pod = "",
                            const std::string& container = "");

}  // namespace dxshim::test
