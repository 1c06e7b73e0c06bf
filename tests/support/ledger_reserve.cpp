#include "tests/support/ledger_reserve.h"

#include <stdexcept>

namespace dxshim::test {
namespace {

Reservation HoldOrThrow(Ledger& ledger, const devices::Placed& placed,
                        const std::string& sandbox_id, const std::string& pod,
                        const std::string& container) {
  const auto held = ledger.Hold(placed, sandbox_id, pod, container);
  if (!held) throw std::logic_error("the ledger did not hold a choice made from its own usage");
  return {*held, placed};
}

}  // namespace

Reservation Reserve(Ledger& ledger, const devices::Inventory& inventory,
                    const devices::DeviceRequest& request, const std::string& sandbox_id,
                    const std::string& pod, const std::string& container) {
  // Another thread may hold in between: choose again, as serve does after a resync.
  for (int choice = 0; choice < 1000; ++choice) {
    const auto usage = ledger.Usage();
    auto placed = devices::Held(inventory, usage, sandbox_id, ledger.policy());
    if (!placed) placed = devices::Choose(inventory, usage, request, ledger.policy());
    if (const auto held = ledger.Hold(*placed, sandbox_id, pod, container)) {
      return {*held, std::move(*placed)};
    }
  }
  throw std::logic_error("the ledger refused 1000 choices in a row");
}

Reservation ReserveAssigned(Ledger& ledger, const std::vector<devices::Device>& devices,
                            const std::string& sandbox_id, const std::string& pod,
                            const std::string& container) {
  return HoldOrThrow(ledger, devices::Assigned(devices, ledger.policy()), sandbox_id, pod,
                     container);
}

}  // namespace dxshim::test
