#include "tests/support/ledger_reserve.h"

#include <stdexcept>

namespace dxshim::test {
namespace {

Reservation HoldOrThrow(Ledger& ledger, const devices::Placed& placed,
                        const std::string& sandbox_id, const std::string& pod,
                        const std::string& container) {
  auto held = ledger.Hold(placed, sandbox_id, pod, container);
  if (!held) throw std::logic_error("the ledger did not hold a choice made from its own usage");
  return std::move(*held);
}

}  // namespace

Reservation Reserve(Ledger& ledger, const devices::Inventory& inventory,
                    const devices::DeviceRequest& request, const std::string& sandbox_id,
                    const std::string& pod, const std::string& container) {
  for (;;) {  // another thread may hold in between: choose again, as serve does
    const auto usage = ledger.Usage();
    auto placed = devices::Held(inventory, usage, sandbox_id, ledger.policy());
    if (!placed) placed = devices::Choose(inventory, usage, request, ledger.policy());
    if (auto held = ledger.Hold(*placed, sandbox_id, pod, container)) return std::move(*held);
  }
}

Reservation ReserveAssigned(Ledger& ledger, const std::vector<devices::Device>& devices,
                            const std::string& sandbox_id, const std::string& pod,
                            const std::string& container) {
  return HoldOrThrow(ledger, devices::Assigned(devices, ledger.policy()), sandbox_id, pod,
                     container);
}

}  // namespace dxshim::test
