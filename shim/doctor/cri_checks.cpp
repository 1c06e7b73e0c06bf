#include "shim/doctor/cri_checks.h"

#include <grpcpp/grpcpp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "devices/allocation/gpu_memory.h"
#include "runtime/v1/api.grpc.pb.h"
#include "shim/base/comma_list.h"
#include "shim/doctor/endpoint_identity.h"
#include "shim/gpu/ledger_feed.h"
#include "shim/ledger/ledger.h"
#include "shim/proxy/runtime_channel.h"
#include "shim/proxy/status_code_name.h"
#include "shim/runtime_record/runtime_record_poller.h"

namespace dxshim::doctor {
namespace {

using runtime::v1::RuntimeService;

std::unique_ptr<RuntimeService::Stub> Stub(const CriEndpoint& endpoint) {
  return RuntimeService::NewStub(DialRuntime(endpoint.dial, std::chrono::milliseconds(1000)));
}

std::unique_ptr<grpc::ClientContext> Context(const CriEndpoint& endpoint) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + endpoint.timeout);
  return context;
}

grpc::Status Version(const CriEndpoint& endpoint, RuntimeVersion& out) {
  runtime::v1::VersionRequest request;
  request.set_version("v1");
  runtime::v1::VersionResponse response;
  auto status = Stub(endpoint)->Version(Context(endpoint).get(), request, &response);
  if (status.ok()) {
    out = {response.runtime_name(), response.runtime_version(), response.runtime_api_version()};
  }
  return status;
}

std::string Describe(const RuntimeVersion& v) {
  return v.name + " " + v.version + " (CRI " + v.api + ")";
}

std::string Why(const grpc::Status& status) {
  return status.error_message().empty() ? StatusCodeName(status.error_code())
                                        : status.error_message();
}

bool IsVmRuntime(const YAML::Node& runtime) {
  // A key that is missing gives yaml-cpp's "zombie" node: only its bool test is safe.
  if (!runtime.IsMap()) return false;
  const auto type = runtime["runtimeType"];
  if (type && type.IsScalar() && type.Scalar().find("kata") != std::string::npos) return true;
  // hcsshim's runhcs options: SandboxIsolation 1 is HYPERVISOR (a Hyper-V utility VM).
  const auto options = runtime["options"];
  if (!options || !options.IsMap()) return false;
  const auto isolation = options["SandboxIsolation"];
  return isolation && isolation.IsScalar() &&
         (isolation.Scalar() == "1" || isolation.Scalar() == "HYPERVISOR");
}

}  // namespace

Check CheckDxshim(const CriEndpoint& listen, const CriEndpoint& runtime,
                  std::optional<RuntimeVersion>& relayed) {
  if (SameEndpoint(listen.name, runtime.name)) {
    return Failed("dxshim", "listen and runtime are the same endpoint, " + listen.name,
                  "listen is where dxshim serves kubelet, runtime where containerd serves "
                  "dxshim: they must differ (dxshim install's takeover moves containerd to "
                  "npipe://./pipe/containerd-behind-dxshim)");
  }
  // Who serves it, from the system: an impostor (or containerd itself) could answer Version
  // too, and one that speaks no gRPC is known before any call waits on it. Nothing there fails
  // at once, before a bridge waits for it to appear.
  const auto serving = EndpointServer(listen.name);
  using State = EndpointServing::State;
  if (serving.state == State::kProcess && !IsDxshim(serving.process.program)) {
    return Failed("dxshim",
                  listen.name + " is served by " + Describe(serving.process) + ", not by dxshim",
                  "stop that program, or correct `listen` to the endpoint dxshim serves, and "
                  "restart dxshim");
  }
  const auto channel = DialRuntime(listen.dial, std::chrono::milliseconds(1000));
  if (serving.state == State::kNobody ||
      !channel->WaitForConnected(std::chrono::system_clock::now() + listen.timeout)) {
    return Failed("dxshim", "nothing accepts a connection on " + listen.name,
                  "start dxshim (Windows: Start-Service dxshim; Linux: systemctl start dxshim) "
                  "and read its log for why it stopped; `listen` must be the endpoint it "
                  "serves");
  }
  const std::string served =
      serving.state == State::kProcess ? ", served by " + Describe(serving.process) + "," : "";
  RuntimeVersion version;
  const auto status = Version(listen, version);
  if (!status.ok()) {
    return Warning(
        "dxshim",
        listen.name + served +
            " accepts connections, but a CRI Version call through it failed: " + Why(status),
        "dxshim relays Version to " + runtime.name + ": see the runtime check");
  }
  relayed = version;
  return Ok("dxshim", listen.name + served + " answers, relaying to " + runtime.name + ": " +
                          Describe(version));
}

std::optional<std::pair<int, int>> MajorMinor(const std::string& version) {
  std::size_t i = version.starts_with('v') ? 1 : 0;
  int major = 0;
  int minor = 0;
  std::size_t digits = 0;
  for (; i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])); ++i, ++digits)
    major = major * 10 + (version[i] - '0');
  if (digits == 0 || i >= version.size() || version[i] != '.') return std::nullopt;
  digits = 0;
  for (++i; i < version.size() && std::isdigit(static_cast<unsigned char>(version[i]));
       ++i, ++digits)
    minor = minor * 10 + (version[i] - '0');
  if (digits == 0) return std::nullopt;
  return std::pair{major, minor};
}

Check CheckRuntime(const CriEndpoint& runtime, bool windows_node,
                   const std::optional<RuntimeVersion>& relayed,
                   std::optional<RuntimeVersion>& direct) {
  RuntimeVersion version;
  const auto status = Version(runtime, version);
  if (!status.ok()) {
    return Failed("runtime",
                  "nothing answers a CRI Version call on " + runtime.name + ": " + Why(status),
                  "start containerd (Windows: Start-Service containerd; Linux: systemctl start "
                  "containerd); `runtime` in dxshim's configuration must be its endpoint");
  }
  direct = version;
  const auto serving = EndpointServer(runtime.name);
  const bool known = serving.state == EndpointServing::State::kProcess;
  if (known && IsDxshim(serving.process.program)) {
    return Failed("runtime",
                  runtime.name + " is served by " + Describe(serving.process) +
                      ": dxshim would relay to itself",
                  "`runtime` must be containerd's endpoint");
  }
  const std::string who = known ? ", served by " + Describe(serving.process) + "," : "";
  if (windows_node && version.name == "containerd") {
    const auto mm = MajorMinor(version.version);
    if (mm && *mm < std::pair{1, 7}) {
      return Failed("runtime",
                    runtime.name + who + " answers " + Describe(version) +
                        ", which drops the devices of a Windows container's config: GPU pods start "
                        "without their GPU",
                    "upgrade containerd to 1.7 or later (its Windows CRI passes devices to "
                    "hcsshim from 1.7 on)");
    }
  }
  if (relayed && (relayed->name != version.name || relayed->version != version.version)) {
    return Warning("runtime",
                   runtime.name + who + " answers " + Describe(version) +
                       ", but what dxshim relays to answers " + Describe(*relayed),
                   "dxshim's `runtime` names another runtime than this configuration: restart "
                   "dxshim with this configuration");
  }
  return Ok("runtime", runtime.name + who + " answers: " + Describe(version));
}

std::optional<std::map<std::string, bool>> HandlersOfConfig(const std::string& config_json) {
  YAML::Node config;
  try {
    config = YAML::Load(config_json);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!config.IsMap() || !config["containerd"].IsMap()) return std::nullopt;
  const auto runtimes = config["containerd"]["runtimes"];
  if (!runtimes.IsMap()) return std::nullopt;
  std::map<std::string, bool> handlers;
  for (const auto& entry : runtimes) {
    handlers[entry.first.as<std::string>()] = IsVmRuntime(entry.second);
  }
  return handlers;
}

std::optional<std::map<std::string, bool>> RuntimeHandlers(const CriEndpoint& runtime) {
  runtime::v1::StatusRequest request;
  request.set_verbose(true);
  runtime::v1::StatusResponse response;
  if (!Stub(runtime)->Status(Context(runtime).get(), request, &response).ok()) return std::nullopt;
  const auto config = response.info().find("config");
  if (config == response.info().end()) return std::nullopt;
  return HandlersOfConfig(config->second);
}

Checks CheckVmHandlers(const std::vector<std::string>& vm_handlers,
                       const std::optional<std::map<std::string, bool>>& handlers) {
  const std::string listed = JoinList(vm_handlers, ", ");
  Checks checks;
  checks.push_back(
      Ok("vm-runtime-handlers", vm_handlers.empty()
                                    ? std::string("none listed: every runtime handler gets GPUs")
                                    : listed + ": GPU requests in their pods are refused"));
  if (!handlers) return checks;
  for (const auto& [name, vm] : *handlers) {
    if (!vm || std::find(vm_handlers.begin(), vm_handlers.end(), name) != vm_handlers.end()) {
      continue;
    }
    checks.push_back(Warning("vm-runtime-handlers",
                             "the runtime's handler " + name +
                                 " runs pods in virtual machines, which get no GPU by device "
                                 "assignment, and vm-runtime-handlers does not list it",
                             "add " + name +
                                 " to vm-runtime-handlers, so that a GPU pod there is refused "
                                 "instead of starting without its GPU"));
  }
  for (const auto& name : vm_handlers) {
    if (handlers->count(name) > 0) continue;
    const std::string have = JoinList(*handlers, ", ", [](const auto& h) { return h.first; });
    checks.push_back(Warning("vm-runtime-handlers",
                             name + " is not one of the runtime's handlers (" + have + ")",
                             "correct the name in vm-runtime-handlers (a RuntimeClass's "
                             "handler, as the runtime's configuration names it)"));
  }
  return checks;
}

Checks CheckHolders(const CriEndpoint& runtime, const devices::AllocationPolicy& policy,
                    const std::vector<devices::Device>& devices) {
  Ledger ledger(policy);
  RuntimeRecordPoller poller(runtime.dial, std::chrono::milliseconds(60000),
                             FeedLedger(ledger, nullptr, "doctor"), "doctor");
  if (!poller.SyncOnce(runtime.timeout, /*wait_for_runtime=*/false)) {
    return {Warning("holders",
                    "the runtime's pods and containers cannot be listed on " + runtime.name,
                    "see the runtime check above")};
  }
  const auto holdings = ledger.Holdings();
  if (holdings.empty()) return {Ok("holders", "no pod holds a GPU")};
  Checks checks;
  for (const auto& h : holdings) {
    std::string pod = h.pod_namespace.empty() ? h.pod : h.pod_namespace + "/" + h.pod;
    if (!h.containers.empty()) {
      pod += " (" + JoinList(h.containers, ", ") + ")";
    }
    std::vector<std::string> gpus;
    for (std::size_t i = 0; i < h.device_ids.size(); ++i) {
      const auto& id = h.device_ids[i];
      std::string gpu = id;
      const auto d = std::find_if(devices.begin(), devices.end(),
                                  [&](const devices::Device& x) { return x.id == id; });
      if (d != devices.end()) {
        gpu +=
            " " + devices::FormatBytes(devices::HeldGpuMemory(
                      *d, i < h.memory.size() ? h.memory[i] : std::nullopt, h.exclusive, policy));
      } else {
        gpu += " (not a GPU of this node now)";
      }
      gpus.push_back(std::move(gpu));
    }
    checks.push_back(Ok(
        "holders", pod + (h.exclusive ? " holds exclusively " : " holds ") + JoinList(gpus, ", ")));
  }
  return checks;
}

}  // namespace dxshim::doctor
