// `dxshim doctor`'s checks over CRI: dxshim answering on its `listen` endpoint (a Version call
// made through it), the runtime answering on `runtime`, the runtime handlers it is configured
// with against vm-runtime-handlers, and who holds which GPU by the runtime's record (read and
// turned into holds by the same code the ledger is rebuilt with).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "devices/allocation/allocation_policy.h"
#include "devices/device.h"
#include "shim/doctor/doctor_check.h"
#include "shim/proxy/endpoint.h"

namespace dxshim::doctor {

// An endpoint as the configuration names it, and what gRPC dials to reach it (on Windows a named
// pipe is reached through a loopback bridge).
struct CriEndpoint {
  std::string name;
  Endpoint dial;
  std::chrono::milliseconds timeout{3000};  // how long each call may take (doctor --timeout)
};

struct RuntimeVersion {
  std::string name;     // "containerd"
  std::string version;  // "v1.6.20"
  std::string api;      // "v1"
};

// Check 2: a Version call through dxshim, once the system says dxshim is what serves `listen`
// (endpoint_identity.h; not known for TCP). `relayed` gets the answer.
Check CheckDxshim(const CriEndpoint& listen, const CriEndpoint& runtime,
                  std::optional<RuntimeVersion>& relayed);

// Check 3: a Version call to the runtime itself. On a Windows node, containerd before 1.7 fails
// (it drops the devices of a Windows container's config); a runtime that answers otherwise than
// what dxshim relayed to (`relayed`, when check 2 got it) is a warning.
Check CheckRuntime(const CriEndpoint& runtime, bool windows_node,
                   const std::optional<RuntimeVersion>& relayed,
                   std::optional<RuntimeVersion>& direct);

// "v1.6.20" -> {1, 6}; nullopt when not a version.
std::optional<std::pair<int, int>> MajorMinor(const std::string& version);

// The runtime's handlers by its verbose Status (containerd's "config": its CRI plugin's
// configuration), each with whether it runs pods in virtual machines (hcsshim's SandboxIsolation
// 1, Hyper-V; or a Kata runtime). nullopt when the runtime does not say.
std::optional<std::map<std::string, bool>> RuntimeHandlers(const CriEndpoint& runtime);
// The handlers' JSON as containerd's Status carries it; nullopt when it has no runtimes.
std::optional<std::map<std::string, bool>> HandlersOfConfig(const std::string& config_json);

// Check 7: vm-runtime-handlers, and (when `handlers` is known) each handler that runs pods in
// virtual machines but is not listed (a warning: its pods would get devices the VM never sees),
// and each listed one the runtime does not have (a warning: a misspelling).
Checks CheckVmHandlers(const std::vector<std::string>& vm_handlers,
                       const std::optional<std::map<std::string, bool>>& handlers);

// Check 9: one line per pod holding GPUs, from the runtime's record. `devices` names the GPUs
// and sizes the default reservations.
Checks CheckHolders(const CriEndpoint& runtime, const devices::AllocationPolicy& policy,
                    const std::vector<devices::Device>& devices);

}  // namespace dxshim::doctor
