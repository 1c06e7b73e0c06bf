// What the GPU unit tests start from: an example inventory (deploy/examples/inventories; no GPU
// exists here), a CreateContainer request of a pod with given annotations as kubelet sends it, the
// Windows target, and a ledger already read from an empty runtime.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "devices/allocation/allocation_policy.h"
#include "devices/device.h"
#include "runtime/v1/api.pb.h"
#include "shim/gpu/container_decision.h"
#include "shim/gpu/injection.h"
#include "shim/ledger/ledger.h"

namespace dxshim::test {

// deploy/examples/inventories/<file>.
devices::Inventory LoadExampleInventory(const std::string& file);

// Container "app" of pod "pod" in namespace "default", sandbox "sandbox-1", the pod annotated
// with `pod_annotations`.
runtime::v1::CreateContainerRequest PodCreateRequest(
    const std::map<std::string, std::string>& pod_annotations);

TargetOptions WindowsTarget();

// A ledger whose first resync found nothing in use.
std::unique_ptr<Ledger> SyncedLedger(devices::AllocationPolicy policy = {});

// Decide() over what `ledger` holds now, and the choice held there when it is not a pass-through,
// as serve does (without the runtime files' re-read). Throws DecisionError, and std::logic_error
// when the ledger does not hold the choice (nothing else holds in between here).
Decision DecideAndHold(const runtime::v1::CreateContainerRequest& request,
                       const devices::Inventory& inventory, Ledger& ledger,
                       const TargetOptions& target,
                       const std::optional<std::string>& runtime_handler = std::string());

}  // namespace dxshim::test
