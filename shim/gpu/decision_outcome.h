// What became of one CreateContainer: the interceptor reports it to its DecisionObserver, which
// serve wires to the decisions' series (decision_metrics.h).
#pragma once

namespace dxshim {

// What became of one CreateContainer: given devices, passed through untouched, or refused (by
// dxshim for a reason, or by the runtime after dxshim rewrote it). For metrics and logs.
enum class DecisionOutcome {
  kInjected,         // the runtime created the container with its devices
  kPassedThrough,    // nothing to do: the caller's bytes went to the runtime untouched
  kInvalidRequest,   // a dxshim.io/ annotation or the plugin-slots annotation does not parse
  kNoMatch,          // no GPU on the node can ever satisfy the request
  kVendorMix,        // enough GPUs match, but not enough of one vendor and driver
  kExhausted,        // matching GPUs exist but are held by other pods
  kMemoryExhausted,  // a matching GPU has a pod slot, but not the GPU memory asked, free now
  kMemoryTooLarge,   // more GPU memory asked than any matching GPU has to share
  kNamespace,        // the pod's namespace may not request GPUs
  kNotSynced,        // the ledger has not been read from the runtime yet
  kRuntimeFailure,   // dxshim rewrote the request, the runtime did not create the container
  kVmSandbox,        // the pod's runtime handler runs it in a VM (vm-runtime-handlers)
  kFilesGone,        // runtime files vanished from the host (a driver change) and no others came
  kNotUtf8,          // a string dxshim would add (from the node's device facts) is not UTF-8
};
inline constexpr DecisionOutcome kAllDecisionOutcomes[] = {
    DecisionOutcome::kInjected,       DecisionOutcome::kPassedThrough,
    DecisionOutcome::kInvalidRequest, DecisionOutcome::kNoMatch,
    DecisionOutcome::kVendorMix,      DecisionOutcome::kExhausted,
    DecisionOutcome::kNamespace,      DecisionOutcome::kNotSynced,
    DecisionOutcome::kRuntimeFailure, DecisionOutcome::kVmSandbox,
    DecisionOutcome::kFilesGone,      DecisionOutcome::kMemoryExhausted,
    DecisionOutcome::kMemoryTooLarge, DecisionOutcome::kNotUtf8};
// The label value: "injected", "passed_through", "invalid_annotation", "no_match", ...
constexpr const char* ToString(DecisionOutcome outcome) {
  switch (outcome) {
    case DecisionOutcome::kInjected:
      return "injected";
    case DecisionOutcome::kPassedThrough:
      return "passed_through";
    case DecisionOutcome::kInvalidRequest:
      return "invalid_annotation";
    case DecisionOutcome::kNoMatch:
      return "no_match";
    case DecisionOutcome::kVendorMix:
      return "vendor_mix";
    case DecisionOutcome::kExhausted:
      return "exhausted";
    case DecisionOutcome::kMemoryExhausted:
      return "memory_exhausted";
    case DecisionOutcome::kMemoryTooLarge:
      return "memory_too_large";
    case DecisionOutcome::kNamespace:
      return "namespace";
    case DecisionOutcome::kNotSynced:
      return "not_synced";
    case DecisionOutcome::kRuntimeFailure:
      return "runtime_failure";
    case DecisionOutcome::kVmSandbox:
      return "vm_sandbox";
    case DecisionOutcome::kFilesGone:
      return "runtime_files_gone";
    case DecisionOutcome::kNotUtf8:
      return "not_utf8";
  }
  return "unknown";
}

}  // namespace dxshim
