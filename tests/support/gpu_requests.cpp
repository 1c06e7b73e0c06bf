#include "tests/support/gpu_requests.h"

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

}  // namespace dxshim::test
