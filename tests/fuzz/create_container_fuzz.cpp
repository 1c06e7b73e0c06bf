// libFuzzer target: CreateContainerRequest bytes as kubelet (or anyone able to reach the socket)
// might send them, through what `dxshim serve` does with them on a node with the example T4
// inventory (Windows target). Properties:
// - the pass-through scan never skips a request the decoder finds a dxshim.io/ annotation or a
//   device in (it may only err towards decoding);
// - a rewrite adds only paths from the inventory: the device's location path and files inside
//   its DriverStore folder, never anything a pod wrote;
// - a rewrite never mounts onto a destination the config already mounts, however it is written
//   (containerd's cleaning of Windows destinations: shim/gpu/container_path.h);
// - a refused request leaves nothing allocated.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "devices/inventory_file.h"
#include "runtime/v1/api.pb.h"
#include "shim/gpu/container_decision.h"
#include "shim/gpu/container_path.h"
#include "shim/gpu/create_request_scan.h"

namespace {

const dxshim::devices::Inventory& Node() {
  static const auto inventory = [] {
    dxshim::devices::Inventory inv;
    inv.devices = dxshim::devices::LoadInventoryFile(
        DXSHIM_SOURCE_DIR "/deploy/examples/inventories/hetero-node.yaml");
    inv.generation = 1;
    return inv;
  }();
  return inventory;
}

bool FromInventory(const std::string& host_path, bool device) {
  for (const auto& d : Node().devices) {
    if (device && host_path == "vpci-location-path://" + d.location_path) return true;
    if (!device && host_path.starts_with(d.driver_store + "\\")) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const bool scan = dxshim::MayNeedDevices(bytes);
  runtime::v1::CreateContainerRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  bool has_annotation = false;
  for (const auto& [key, value] : request.sandbox_config().annotations()) {
    has_annotation = has_annotation || key.starts_with("dxshim.io/");
  }
  if ((has_annotation || request.config().devices_size() > 0) && !scan) std::abort();

  dxshim::devices::AllocationPolicy policy;
  policy.max_containers_per_device = 2;
  policy.narrow_class_devices = true;
  const auto nothing_held = [] {
    dxshim::LedgerView view;
    view.synced = true;
    return view;
  };
  dxshim::TargetOptions target;
  target.target = dxshim::config::Target::kWindows;
  dxshim::Decision decision;
  try {
    decision = dxshim::Decide(request, Node(), policy, nothing_held, target);
  } catch (const dxshim::DecisionError&) {
    return 0;
  }
  if (decision.pass_through) return 0;
  for (const auto& d : decision.plan.add_devices) {
    if (!FromInventory(d.host_path(), true)) std::abort();
  }
  if (decision.plan.replace_index && !FromInventory(decision.plan.replacement.host_path(), true)) {
    std::abort();
  }
  std::set<std::string> taken;
  for (const auto& m : request.config().mounts()) {
    taken.insert(dxshim::MountDestinationKey(m.container_path(), m.host_path(), true));
  }
  for (const auto& m : decision.plan.add_mounts) {
    if (!FromInventory(m.host_path(), false) || !m.readonly()) std::abort();
    if (!taken.insert(dxshim::MountDestinationKey(m.container_path(), m.host_path(), true))
             .second) {
      std::abort();
    }
  }
  dxshim::ApplyPlan(decision.plan, *request.mutable_config());
  std::string out;
  if (!request.SerializeToString(&out)) std::abort();
  return 0;
}
