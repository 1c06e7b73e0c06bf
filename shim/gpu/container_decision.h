// What dxshim does with one CreateContainerRequest: the one decision shared by `dxshim serve`
// (which reserves for real) and `dxshim rewrite` (which shows what would happen).
#pragma once

#include <grpcpp/support/status.h>

#include <functional>
#include <optional>
#include <string>

#include "devices/device_source.h"
#include "runtime/v1/api.pb.h"
#include "shim/gpu/decision_outcome.h"
#include "shim/gpu/injection.h"
#include "shim/ledger/ledger.h"

namespace dxshim {

// A request dxshim refuses: the status kubelet gets (and shows in the pod's events), and why.
class DecisionError : public std::runtime_error {
 public:
  DecisionError(grpc::StatusCode code, DecisionOutcome outcome, const std::string& message)
      : std::runtime_error(message), code_(code), outcome_(outcome) {}
  grpc::StatusCode code() const { return code_; }
  DecisionOutcome outcome() const { return outcome_; }

 private:
  grpc::StatusCode code_;
  DecisionOutcome outcome_;
};

struct Decision {
  bool pass_through = true;  // nothing to do: forward the caller's bytes untouched
  std::string why;           // for --explain and logs
  bool notable = false;      // a pass-through whose reason belongs in the log
  devices::Placed placed;    // valid unless pass_through
  InjectionPlan plan;
};

// Reads the pod's request (annotations) and the devices kubelet already assigned, chooses from
// what `ledger` (Ledger::View, read only when the container asks for a GPU) says is in use under
// `policy`, and plans the injection. A container of a pod that holds GPUs gets them again; memory
// units it brings that the pod does not hold yet grow the pod's reservation on each of them
// (RESOURCE_EXHAUSTED when that growth is not free), and it is told its own units as its budget. It
// holds nothing: `dxshim serve` holds a Decision that is not pass_through (Ledger::Hold), `dxshim
// rewrite` only shows it. `runtime_handler` is the handler of the pod's sandbox ("" the runtime's
// default), nullopt when dxshim does not know it yet. Throws DecisionError.
Decision Decide(const runtime::v1::CreateContainerRequest& request,
                const devices::Inventory& inventory, const devices::AllocationPolicy& policy,
                const std::function<LedgerView()>& ledger, const TargetOptions& target,
                const std::optional<std::string>& runtime_handler = std::string());

// "namespace/name" of the pod, for messages.
std::string PodName(const runtime::v1::PodSandboxConfig& sandbox);
// How dxshim's refusals start: "dxshim: pod <namespace>/<name>: ", and with the container,
// "dxshim: pod <namespace>/<name> container <name>: ".
std::string AboutPod(const runtime::v1::PodSandboxConfig& sandbox);
std::string AboutContainer(const runtime::v1::CreateContainerRequest& request);

}  // namespace dxshim
