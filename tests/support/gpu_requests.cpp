#include "tests/support/gpu_requests.h"

#include <stdexcept>

#include "devices/inventory_file.h"

namespace dxshim::test {

devices::Inventory LoadExampleInventory(const std::string& file) {
  devices::Inventory inv;
  inv.devices =
      devices::LoadInventoryFile(DXSHIM_SOURCE_DIR "/deploy/examples/inventories/" + file);
  return inv;
}

runtime::v1::CreateContainerRequest PodCreateRequest(
    const std::map<std::string, std::string>& pod_annotations) {
  runtime::v1::CreateContainerRequest r;
  r.set_pod_sandbox_id("sandbox-1");
  r.mutable_config()->mutable_metadata()->set_name("app");
  r.mutable_sandbox_config()->mutable_metadata()->set_name("pod");
  r.mutable_sandbox_config()->mutable_metadata()->set_namespace_("default");
  for (const auto& [k, v] : pod_annotations) {
    (*r.mutable_sandbox_config()->mutable_annotations())[k] = v;
  }
  return r;
}

TargetOptions WindowsTarget() {
  TargetOptions t;
  t.target = config::Target::kWindows;
  return t;
}

std::unique_ptr<Ledger> SyncedLedger(devices::AllocationPolicy policy) {
  auto ledger = std::make_unique<Ledger>(std::move(policy));
  ledger->BeginResync();
  ledger->FinishResync({});
  return ledger;
}

Decision DecideAndHold(const runtime::v1::CreateContainerRequest& request,
                       const devices::Inventory& inventory, Ledger& ledger,
                       const TargetOptions& target,
                       const std::optional<std::string>& runtime_handler) {
  auto decision = Decide(
      request, inventory, ledger.policy(), [&] { return ledger.View(); }, target, runtime_handler);
  if (decision.pass_through) return decision;
  if (!ledger.Hold(decision.placed, request.pod_sandbox_id(), PodName(request.sandbox_config()),
                   request.config().metadata().name())) {
    throw std::logic_error("the ledger did not hold a choice made from its own usage");
  }
  return decision;
}

}  // namespace dxshim::test
