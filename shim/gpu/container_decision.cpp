#include "shim/gpu/container_decision.h"

#include <algorithm>
#include <set>

#include "devices/allocation/device_request.h"
#include "devices/allocation/gpu_memory.h"
#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"

namespace dxshim {
namespace {

bool Listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

void CheckNamespace(const devices::AllocationPolicy& policy, const std::string& ns,
                    const std::string& about_pod) {
  if (Listed(policy.deny_namespaces, ns) ||
      (!policy.allow_namespaces.empty() && !Listed(policy.allow_namespaces, ns))) {
    throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kNamespace,
                        about_pod + "namespace '" + ns +
                            "' may not request GPUs on this node (dxshim allow-namespaces / "
                            "deny-namespaces)");
  }
}

// The pod's runtime handler when it is one of the target's VM handlers. Throws UNAVAILABLE when
// that matters and the handler is not known yet.
std::optional<std::string> VmHandler(const TargetOptions& target,
                                     const std::optional<std::string>& handler,
                                     const std::string& sandbox_id, const std::string& about_pod) {
  if (target.vm_runtime_handlers.empty()) return std::nullopt;
  if (!handler) {
    throw DecisionError(grpc::StatusCode::UNAVAILABLE, DecisionOutcome::kNotSynced,
                        about_pod + "sandbox " + sandbox_id +
                            " was not started through dxshim and the runtime has not listed it "
                            "yet, so its runtime handler is not known; retry shortly");
  }
  if (!Listed(target.vm_runtime_handlers, *handler)) return std::nullopt;
  return handler;
}

[[noreturn]] void Invalid(const std::string& message) {
  throw DecisionError(grpc::StatusCode::INVALID_ARGUMENT, DecisionOutcome::kInvalidRequest,
                      message);
}

// The memory units kubelet gave the container (dxshim's memory resource), if any, into `ids`:
// `wanted` reserves their memory spread evenly over its GPUs (one GPU when no count was asked),
// which the pod's dxshim.io/gpu-memory, if any, must equal. Throws DecisionError.
void ApplyMemoryUnits(const runtime::v1::CreateContainerRequest& request,
                      const devices::AllocationPolicy& policy,
                      std::optional<devices::DeviceRequest>& wanted, bool count_given,
                      const std::string& about_container, std::set<std::string>& ids) {
  const auto& annotations = request.config().annotations();
  const auto units = annotations.find(keys::kPluginMemoryUnitsAnnotation);
  if (units == annotations.end()) return;
  unsigned count = 0;
  try {
    count = devices::CountPluginMemoryUnits(units->second);
  } catch (const devices::RequestError& e) {
    Invalid(about_container + e.what());
  }
  // Each item is a valid id, none repeated (CountPluginMemoryUnits).
  for (const auto id : SplitCommaList(units->second)) ids.emplace(id);
  if (!wanted) wanted = devices::DeviceRequest{};
  if (!count_given && wanted->pins.empty()) wanted->count = 1;
  const std::uint64_t total = std::uint64_t{count} * policy.gpu_memory_unit;
  const auto unit = devices::FormatBytes(policy.gpu_memory_unit);
  if (count % wanted->count != 0) {
    Invalid(about_container + "its resource limit gave it " + std::to_string(count) + " x " + unit +
            " of GPU memory, which does not divide evenly over its " +
            std::to_string(wanted->count) +
            " GPUs; make the memory limit a multiple of the GPU count");
  }
  const auto per_gpu = total / wanted->count;
  const auto& pod = request.sandbox_config().annotations();
  if (pod.count(keys::kGpuMemory) && wanted->gpu_memory != per_gpu) {
    Invalid(about_container + "annotation " + keys::kGpuMemory + " asks for " +
            devices::FormatBytes(wanted->gpu_memory) +
            " per GPU but the container's resource limit gave it " + devices::FormatBytes(per_gpu) +
            " per GPU (" + std::to_string(count) + " x " + unit + " over " +
            std::to_string(wanted->count) + " GPU(s)); drop the annotation or make them equal");
  }
  wanted->gpu_memory = per_gpu;
  wanted->containers.clear();
}

// What the container asks for: the pod's dxshim.io/ annotations, the count its resource limit
// gave it (dxshim's device plugin slots) and the memory (the memory units), limited to the
// containers in the request's scope; the memory units' ids into `units`. Nothing (and `why`) when
// it asks for no GPU. Throws DecisionError for a request that is not valid.
std::optional<devices::DeviceRequest> WantedDevices(
    const runtime::v1::CreateContainerRequest& request, const devices::AllocationPolicy& policy,
    const std::string& about_pod, const std::string& about_container, std::string& why,
    std::set<std::string>& units) {
  const auto& config = request.config();
  const auto& sandbox = request.sandbox_config();
  const auto& container = config.metadata().name();
  std::optional<devices::DeviceRequest> wanted;
  try {
    const std::map<std::string, std::string> annotations(sandbox.annotations().begin(),
                                                         sandbox.annotations().end());
    wanted = devices::ParseDeviceRequest(annotations);
  } catch (const devices::RequestError& e) {
    throw DecisionError(grpc::StatusCode::INVALID_ARGUMENT, DecisionOutcome::kInvalidRequest,
                        about_pod + e.what());
  }
  // The extended resource (resources.limits): kubelet put what dxshim's device plugin answered
  // to Allocate on this container. It says how many GPUs; the pod's annotations still say which.
  const auto slots = config.annotations().find(keys::kPluginSlotsAnnotation);
  if (slots != config.annotations().end()) {
    unsigned count = 0;
    try {
      count = devices::CountPluginSlots(slots->second);
    } catch (const devices::RequestError& e) {
      throw DecisionError(grpc::StatusCode::INVALID_ARGUMENT, DecisionOutcome::kInvalidRequest,
                          about_container + e.what());
    }
    const auto by_annotation = sandbox.annotations().find(keys::kGpu);
    if (wanted && by_annotation != sandbox.annotations().end() && wanted->count != count) {
      throw DecisionError(grpc::StatusCode::INVALID_ARGUMENT, DecisionOutcome::kInvalidRequest,
                          about_container + "annotation " + keys::kGpu + " asks for " +
                              std::to_string(wanted->count) + " GPU(s) but the container's " +
                              "resource limit gave it " + std::to_string(count) +
                              "; drop the annotation or make them equal");
    }
    if (!wanted) wanted = devices::DeviceRequest{};
    wanted->count = count;
    // A container that asks by its resource limit is in scope whatever dxshim.io/containers says.
    wanted->containers.clear();
  }
  const bool count_given =
      slots != config.annotations().end() || sandbox.annotations().count(keys::kGpu) > 0;
  ApplyMemoryUnits(request, policy, wanted, count_given, about_container, units);
  if (wanted && !devices::AppliesTo(*wanted, container)) {
    why = "container " + container + " is not in " + keys::kContainers;
    wanted.reset();
  }
  return wanted;
}

// The pod's devices again (`held`, holding the memory units `pod_units`), for a container given
// the memory units `units`. A pod reserves the distinct memory unit ids of all its containers,
// spread evenly over its GPUs: the units kubelet's device manager counted for it. Kubelet (v1.26,
// pkg/kubelet/cm/devicemanager/manager.go Allocate) puts an init container's devices into the
// pod's devicesToReuse (pod_devices.go addContainerAllocatedResources), gives the next container
// reusable devices first (devicesToAllocate, "Allocates from reusableDevices list first") and
// takes an app container's devices out of devicesToReuse (removeContainerAllocatedResources): an
// init container of 2 units then an app container of 6 hold 6 distinct ids, two app containers
// of 4 hold 8. (Newer kubelets treat a restartable init container, a sidecar, as an app container
// there: its ids are not reused, which the distinct count follows as well.) Units the pod does not
// hold yet grow its reservation, if that is free now (devices::GrowHeld). Throws DecisionError for
// a count that does not divide evenly over the pod's GPUs, AllocationError when the growth does
// not fit.
devices::Placed WithMemoryUnits(devices::Placed held, const std::set<std::string>& pod_units,
                                const std::set<std::string>& units, const devices::Usage& usage,
                                const devices::AllocationPolicy& policy,
                                const std::string& about_container) {
  held.memory_units = pod_units;
  if (units.empty()) return held;
  const auto gpus = held.devices.size();
  const auto unit = devices::FormatBytes(policy.gpu_memory_unit);
  if (units.size() % gpus != 0) {
    Invalid(about_container + "its resource limit gave it " + std::to_string(units.size()) + " x " +
            unit + " of GPU memory, which does not divide evenly over its pod's " +
            std::to_string(gpus) + " GPUs; make the memory limit a multiple of the GPU count");
  }
  held.memory_units.insert(units.begin(), units.end());
  const auto total = held.memory_units.size();
  const auto added = total - pod_units.size();
  if (added == 0) return held;  // all of them held already (an init container's, reused)
  if (total % gpus != 0) {
    Invalid(about_container + "its resource limit adds " + std::to_string(added) + " x " + unit +
            " of GPU memory to the pod's " + std::to_string(pod_units.size()) + ", and " +
            std::to_string(total) + " x " + unit + " does not divide evenly over the pod's " +
            std::to_string(gpus) +
            " GPUs; make each container's memory limit a multiple of the GPU count");
  }
  const auto adds = "its resource limit adds " + std::to_string(added) + " x " + unit +
                    " of GPU memory the pod did not hold (" + std::to_string(units.size()) +
                    " given, " + std::to_string(units.size() - added) +
                    " held already by the pod's other containers)";
  const auto memory = devices::MemoryOfUnits(total, gpus, policy);
  return devices::GrowHeld(std::move(held), usage, memory, adds, policy);
}

// The pod's devices again if it holds some (its reservation grown by the memory units `units`
// that it does not hold yet), else a choice for `wanted`; an allocation refused becomes the
// DecisionError of its kind.
devices::Placed ChooseOrRefuse(const devices::Inventory& inventory, const LedgerView& ledger,
                               const devices::DeviceRequest& wanted,
                               const std::set<std::string>& units, const std::string& sandbox_id,
                               const devices::AllocationPolicy& policy,
                               const std::string& about_container) {
  try {
    if (auto held = devices::Held(inventory, ledger.usage, sandbox_id, policy)) {
      static const std::set<std::string> kNone;
      const auto pod_units = ledger.memory_units.find(sandbox_id);
      return WithMemoryUnits(std::move(*held),
                             pod_units == ledger.memory_units.end() ? kNone : pod_units->second,
                             units, ledger.usage, policy, about_container);
    }
    auto placed = devices::Choose(inventory, ledger.usage, wanted, policy);
    placed.memory_units = units;
    return placed;
  } catch (const devices::AllocationError& e) {
    const auto message = about_container + e.what();
    switch (e.kind()) {
      case devices::AllocationError::Kind::kExhausted:
        throw DecisionError(grpc::StatusCode::RESOURCE_EXHAUSTED, DecisionOutcome::kExhausted,
                            message);
      case devices::AllocationError::Kind::kMemoryExhausted:
        throw DecisionError(grpc::StatusCode::RESOURCE_EXHAUSTED, DecisionOutcome::kMemoryExhausted,
                            message);
      case devices::AllocationError::Kind::kMemoryTooLarge:
        throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kMemoryTooLarge,
                            message);
      case devices::AllocationError::Kind::kVendorMix:
        throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kVendorMix,
                            message);
      case devices::AllocationError::Kind::kImpossible:
        break;
    }
    throw DecisionError(grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kNoMatch, message);
  }
}

}  // namespace

std::string PodName(const runtime::v1::PodSandboxConfig& sandbox) {
  return sandbox.metadata().namespace_() + "/" + sandbox.metadata().name();
}

std::string AboutPod(const runtime::v1::PodSandboxConfig& sandbox) {
  return "dxshim: pod " + PodName(sandbox) + ": ";
}

std::string AboutContainer(const runtime::v1::CreateContainerRequest& request) {
  return "dxshim: pod " + PodName(request.sandbox_config()) + " container " +
         request.config().metadata().name() + ": ";
}

Decision Decide(const runtime::v1::CreateContainerRequest& request,
                const devices::Inventory& inventory, const devices::AllocationPolicy& policy,
                const std::function<LedgerView()>& read_ledger, const TargetOptions& target,
                const std::optional<std::string>& runtime_handler) {
  const auto& config = request.config();
  const auto& sandbox = request.sandbox_config();
  const auto about_pod = AboutPod(sandbox);
  const auto about_container = AboutContainer(request);
  Decision decision;

  std::set<std::string> units;
  auto wanted = WantedDevices(request, policy, about_pod, about_container, decision.why, units);

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
    if (const auto vm = VmHandler(target, runtime_handler, request.pod_sandbox_id(), about_pod)) {
      if (wanted) {
        throw DecisionError(
            grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kVmSandbox,
            about_container + "its runtime handler '" + *vm +
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
  const bool narrow = class_index && policy.narrow_class_devices && assigned.empty();
  if (narrow && !wanted) wanted = devices::DeviceRequest{};  // one GPU for the class device

  if (!wanted && assigned.empty()) {
    if (decision.why.empty())
      decision.why = std::string("no ") + keys::kPrefix + " request and no known device assigned";
    return decision;
  }
  const auto ledger = read_ledger();
  if (!ledger.synced) {
    throw DecisionError(grpc::StatusCode::UNAVAILABLE, DecisionOutcome::kNotSynced,
                        about_pod +
                            "still reading the node's existing GPU allocations from the "
                            "runtime; retry shortly");
  }
  auto& placed = decision.placed;
  if (!assigned.empty()) {
    if (!units.empty()) {
      // Kubelet counted these units for the pod; devices another plugin put in reserve none.
      Invalid(about_container + "its " + keys::kGpuMemoryResource +
              " resource limit cannot be reserved: its GPUs were put into the config by another "
              "device plugin, which dxshim leaves as they are; drop the memory limit or the "
              "other plugin's resource");
    }
    placed = devices::Assigned(assigned, policy);
    if (wanted) placed.explanation += std::string(" (") + keys::kPrefix + " request not used)";
  } else {
    CheckNamespace(policy, sandbox.metadata().namespace_(), about_pod);
    placed = ChooseOrRefuse(inventory, ledger, *wanted, units, request.pod_sandbox_id(), policy,
                            about_container);
  }
  // What this container may use: its own memory units over its GPUs, when it was given some
  // (the pod's reservation may be larger: its other containers' units); else the pod's.
  std::optional<std::uint64_t> own;
  if (!units.empty() && placed.source != devices::Placed::Source::kAssigned) {
    own = devices::MemoryOfUnits(units.size(), placed.devices.size(), policy);
  }
  decision.pass_through = false;
  decision.why = "dxshim: " + placed.explanation;
  decision.plan = PlanInjection(config, placed.devices, placed.exclusive, decision.why,
                                narrow ? class_index : std::nullopt, target,
                                MemoryBudget{placed.memory, placed.memory_asked, own});
  if (!decision.plan.not_utf8.empty()) {
    // The node's facts are at fault, not the pod: a request dxshim parsed holds only valid UTF-8
    // (C++ protobuf refuses anything else in a proto3 string), so what is not came from the device
    // inventory, discovery or the configuration. Never forwarded: containerd 2.2 and later refuse
    // it ("string field contains invalid UTF-8"), after dxshim would have held the GPUs for it.
    // The first two (a DriverStore folder at fault is in every mount of its GPU), then how many.
    const auto& all = decision.plan.not_utf8;
    std::string fields;
    for (std::size_t i = 0; i < all.size() && i < 2; ++i) fields += (i ? "; " : "") + all[i];
    if (all.size() > 2) fields += "; and " + std::to_string(all.size() - 2) + " more";
    throw DecisionError(
        grpc::StatusCode::FAILED_PRECONDITION, DecisionOutcome::kNotUtf8,
        about_container + "not creating it with text that is not UTF-8, which a " +
            "CRI request must not carry (containerd 2.2 and later refuse it): " + fields +
            "; fix the GPU's entry in the device inventory or its driver's " +
            "registration on this node");
  }
  return decision;
}

}  // namespace dxshim
