#include "shim/gpu/container_decision.h"

#include <algorithm>

#include "devices/allocation/device_request.h"

namespace dxshim {
namespace {

bool Listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

void CheckNamespace(const devices::AllocationPolicy& policy, const std::string& ns,
                    const std::string& pod) {
  if (Listed(policy.deny_namespaces, ns) ||
      (!policy.allow_namespaces.empty() && !Listed(policy.allow_namespaces, ns))) {
    throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kNamespace,
                        "dxshim: pod " + pod + ": namespace '" + ns +
                            "' may not request GPUs on this node (dxshim allow-namespaces / "
                            "deny-namespaces)");
  }
}

// The pod's runtime handler when it is one of the target's VM handlers. Throws UNAVAILABLE when
// that matters and the handler is not known yet.
std::optional<std::string> VmHandler(const TargetOptions& target,
                                     const std::optional<std::string>& handler,
                                     const std::string& sandbox_id, const std::string& pod) {
  if (target.vm_runtime_handlers.empty()) return std::nullopt;
  if (!handler) {
    throw DecisionError(grpc::StatusCode::UNAVAILABLE, DecisionOutcome::kNotSynced,
                        "dxshim: pod " + pod + ": sandbox " + sandbox_id +
                            " was not started through dxshim and the runtime has not listed it "
                            "yet, so its runtime handler is not known; retry shortly");
  }
  if (!Listed(target.vm_runtime_handlers, *handler)) return std::nullopt;
  return handler;
}

}  // namespace

std::string PodName(const runtime::v1::PodSandboxConfig& sandbox) {
  return sandbox.metadata().namespace_() + "/" + sandbox.metadata().name();
}

Decision Decide(const runtime::v1::CreateContainerRequest& request,
                const devices::Inventory& inventory, devices::Allocator& allocator,
                const TargetOptions& target, const std::optional<std::string>& runtime_handler) {
  const auto& config = request.config();
  const auto& sandbox = request.sandbox_config();
  const auto pod = PodName(sandbox);
  const auto container = config.metadata().name();
  Decision decision;

  std::optional<devices::DeviceRequest> wanted;
  try {
    const std::map<std::string, std::string> annotations(sandbox.annotations().begin(),
                                                         sandbox.annotations().end());
    wanted = devices::ParseDeviceRequest(annotations);
  } catch (const devices::RequestError& e) {
    throw DecisionError(grpc::StatusCode::INVALID_ARGUMENT, DecisionOutcome::kInvalidRequest,
                        "dxshim: pod " + pod + ": " + e.what());
  }
  // The extended resource (resources.limits): kubelet put what dxshim's device plugin answered
  // to Allocate on this container. It says how many GPUs; the pod's annotations still say which.
  const auto slots = config.annotations().find(std::string(devices::kPluginSlotsAnnotation));
  if (slots != config.annotations().end()) {
    unsigned count = 0;
    try {
      count = devices::CountPluginSlots(slots->second);
    } catch (const devices::RequestError& e) {
      throw DecisionError(grpc::StatusCode::INVALID_ARGUMENT, DecisionOutcome::kInvalidRequest,
                          "dxshim: pod " + pod + " container " + container + ": " + e.what());
    }
    const auto by_annotation = sandbox.annotations().find("dxshim.io/gpu");
    if (wanted && by_annotation != sandbox.annotations().end() && wanted->count != count) {
      throw DecisionError(grpc::StatusCode::INVALID_ARGUMENT, DecisionOutcome::kInvalidRequest,
                          "dxshim: pod " + pod + " container " + container +
                              ": annotation dxshim.io/gpu asks for " +
                              std::to_string(wanted->count) + " GPU(s) but the container's " +
                              "resource limit gave it " + std::to_string(count) +
                              "; drop the annotation or make them equal");
    }
    if (!wanted) wanted = devices::DeviceRequest{};
    wanted->count = count;
    // A container that asks by its resource limit is in scope whatever dxshim.io/containers says.
    wanted->containers.clear();
  }
  if (wanted && !devices::AppliesTo(*wanted, container)) {
    decision.why = "container " + container + " is not in dxshim.io/containers";
    wanted.reset();
  }

  // Devices kubelet already put into the config (a device plugin's choice).
  std::vector<devices::Device> assigned;
  std::optional<int> class_index;
  for (int i = 0; i < config.devices_size(); ++i) {
    const auto& entry = config.devices(i);
    if (IsClassDevice(entry) && !class_index) class_index = i;
    for (const auto& d : inventory.devices) {
      if (NamesDevice(entry, d, target)) assigned.push_back(d);
    }
  }
  // hcsshim gives GPUs to process-isolated containers only (microsoft/hcsshim#1902): in a pod
  // that runs in a VM a GPU request fails here, before anything is held, and a device some other
  // plugin put in is left exactly as it is.
  if (wanted || !assigned.empty() || class_index) {
    if (const auto vm = VmHandler(target, runtime_handler, request.pod_sandbox_id(), pod)) {
      if (wanted) {
        throw DecisionError(
            grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kVmSandbox,
            "dxshim: pod " + pod + " container " + container + ": its runtime handler '" + *vm +
                "' runs pods in virtual machines (vm-runtime-handlers), which cannot be given "
                "GPUs by device assignment (only process-isolated containers can); use a "
                "process-isolated RuntimeClass or drop the GPU request");
      }
      decision.why = "runtime handler '" + *vm +
                     "' runs pods in virtual machines (vm-runtime-handlers): the devices already "
                     "in the config are left as they are, no runtime files added";
      decision.notable = true;
      return decision;
    }
  }
  const bool narrow = class_index && allocator.policy().narrow_class_devices && assigned.empty();
  if (narrow && !wanted) wanted = devices::DeviceRequest{};  // one GPU for the class device

  if (!wanted && assigned.empty()) {
    if (decision.why.empty()) decision.why = "no dxshim.io/ request and no known device assigned";
    return decision;
  }
  if (!allocator.synced()) {
    throw DecisionError(grpc::StatusCode::UNAVAILABLE, DecisionOutcome::kNotSynced,
                        "dxshim: pod " + pod +
                            ": still reading the node's existing GPU allocations from the "
                            "runtime; retry shortly");
  }
  if (!assigned.empty()) {
    decision.reservation = allocator.ReserveAssigned(assigned, request.pod_sandbox_id());
    if (wanted) decision.reservation.explanation += " (dxshim.io/ request not used)";
  } else {
    CheckNamespace(allocator.policy(), sandbox.metadata().namespace_(), pod);
    try {
      decision.reservation = allocator.Reserve(inventory, *wanted, request.pod_sandbox_id());
    } catch (const devices::AllocationError& e) {
      const auto message = "dxshim: pod " + pod + " container " + container + ": " + e.what();
      switch (e.kind()) {
        case devices::AllocationError::Kind::kExhausted:
          throw DecisionError(grpc::StatusCode::RESOURCE_EXHAUSTED, DecisionOutcome::kExhausted,
                              message);
        case devices::AllocationError::Kind::kVendorMix:
          throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kVendorMix,
                              message);
        case devices::AllocationError::Kind::kImpossible:
          break;
      }
      throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kNoMatch,
                          message);
    }
  }
  decision.pass_through = false;
  decision.why = "dxshim: " + decision.reservation.explanation;
  decision.plan =
      PlanInjection(config, decision.reservation.devices, decision.reservation.exclusive,
                    decision.why, narrow ? class_index : std::nullopt, target);
  return decision;
}

}  // namespace dxshim
