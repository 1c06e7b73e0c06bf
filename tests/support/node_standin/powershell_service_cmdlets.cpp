// Get-Service, Start-Service, Stop-Service and Restart-Service through the service control
// manager, as Windows PowerShell 5.1 does them (Microsoft.PowerShell.Commands.Management's
// Service.cs: DoStartService, DoStopService, DoWaitForStatus) over .NET Framework's
// ServiceController (Start; Stop, which first stops every dependent service that is not
// stopped, waiting up to 30 s for each). Starting a service's dependencies is the service
// control manager's own work: PowerShell only calls StartService.
#include <chrono>
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"

namespace dxshim::test::node_standin::powershell {

namespace {

constexpr std::uint32_t kDependentServicesRunning = 1051;  // ERROR_DEPENDENT_SERVICES_RUNNING
constexpr std::uint32_t kServiceAlreadyRunning = 1056;     // ERROR_SERVICE_ALREADY_RUNNING
constexpr std::uint32_t kServiceNotActive = 1062;          // ERROR_SERVICE_NOT_ACTIVE

Value ServiceObject(const ServiceInfo& info) {
  auto service = NewObject("System.ServiceProcess.ServiceController",
                           "System.ServiceProcess.ServiceController");
  service->Set("Name", Value::String(info.name));
  service->Set("ServiceName", Value::String(info.name));
  service->Set("DisplayName", Value::String(info.display_name));
  service->Set("Status", Value::String(info.status));
  service->Set("CanStop", Value::Bool(info.can_stop));
  return Value::Object(service);
}

std::string Label(const ServiceInfo& info) { return info.display_name + " (" + info.name + ")"; }

}  // namespace

bool Interpreter::ServiceCmdlet(const std::string& name, Call& call) {
  const auto is = [&name](const char* cmdlet) { return EqualsNoCase(name, cmdlet); };
  if (!is("Get-Service") && !is("Start-Service") && !is("Stop-Service") && !is("Restart-Service")) {
    return false;
  }
  const Bound b =
      Bind(call, {{"Name", false, 0, false, {"ServiceName"}},
                  {"InputObject", false},
                  {"Force", true},
                  {"NoWait", true},
                  {"PassThru", true},
                  {"DisplayName", false},
                  {"DependentServices", true, -1, false, {"DS"}},
                  {"RequiredServices", true, -1, false, {"SDO", "ServicesDependedOn"}}});
  if (b.Has("DisplayName") || ToBool(b.Get("DependentServices")) ||
      ToBool(b.Get("RequiredServices")) || ToBool(b.Get("PassThru"))) {
    Unsupported(call.name + " -DisplayName/-DependentServices/-RequiredServices/-PassThru");
  }
  const std::string& action = b.error_action;
  std::vector<std::string> names;
  Values given =
      b.Has("Name") ? Enumerate(b.Get("Name"), false) : Enumerate(b.Get("InputObject"), false);
  if (!b.Has("Name") && !b.Has("InputObject") && call.has_input) given = call.input;
  for (const Value& item : given) {
    const Value* service_name =
        item.kind == Value::Kind::kObject ? item.object->Find("Name") : nullptr;
    names.push_back(ToText(service_name ? *service_name : item));
  }
  if (names.empty()) Unsupported(call.name + " of every service");

  // DoWaitForStatus: until TARGET, while PENDING; a warning every 2 s, no time limit.
  const auto wait_for = [this, &action](const std::string& service, const std::string& target,
                                        const std::string& pending, const std::string& verb) {
    for (int polls = 1;; ++polls) {
      const ServiceInfo info = host_.QueryService(service);
      if (info.status == target) return true;
      if (info.status != pending) {
        WriteError(verb == "start" ? "Start-Service" : "Stop-Service",
                   "Failed to " + verb + " service '" + Label(info) + "'.", action);
        return false;
      }
      host_.Sleep(std::chrono::milliseconds(250));  // ServiceController.WaitForStatus's poll
      if (polls % 8 == 0) {
        host_.WriteOutput("WARNING: Waiting for service '" + Label(info) + "' to " + verb +
                          "...\r\n");
      }
    }
  };
  // ServiceController.Stop(): the dependents not stopped first (each waited for 30 s), then
  // ControlService(STOP). The first error, as its InvalidOperationException would be.
  std::function<std::uint32_t(const std::string&)> controller_stop =
      [&](const std::string& service) -> std::uint32_t {
    for (const auto& dependent : host_.DependentServices(service)) {
      if (host_.QueryService(dependent).status == "Stopped") continue;
      if (const std::uint32_t error = controller_stop(dependent)) return error;
      for (int polls = 0;; ++polls) {
        if (host_.QueryService(dependent).status == "Stopped") break;
        if (polls >= 120) Fail("Time out has expired and the operation has not been completed.");
        host_.Sleep(std::chrono::milliseconds(250));
      }
    }
    return host_.StopNamedService(service);
  };
  const auto start = [&](const ServiceInfo& info) {
    const std::uint32_t error = host_.StartNamedService(info.name);
    if (error != 0 && error != kServiceAlreadyRunning) {
      WriteError("Start-Service",
                 "Service '" + Label(info) +
                     "' cannot be started due to the following error: "
                     "Cannot start service " +
                     info.name + " on computer '.'. (error " + std::to_string(error) + ")",
                 action);
      return false;
    }
    return wait_for(info.name, "Running", "StartPending", "start");
  };
  // DoStopService: the services it stopped (the running dependents, then itself).
  const auto stop = [&](const ServiceInfo& info, bool force) {
    std::vector<ServiceInfo> stopped;
    std::vector<ServiceInfo> dependents;
    for (const auto& dependent : host_.DependentServices(info.name)) {
      dependents.push_back(host_.QueryService(dependent));
    }
    if (!force) {
      for (const auto& dependent : dependents) {
        if (dependent.status == "Stopped") continue;
        WriteError(is("Restart-Service") ? "Restart-Service" : "Stop-Service",
                   "Cannot stop service '" + Label(info) +
                       "' because it has dependent services. "
                       "It can only be stopped if the Force flag is set.",
                   action);
        return stopped;
      }
    }
    for (const auto& dependent : dependents) {
      if ((dependent.status == "Running" || dependent.status == "StartPending") &&
          dependent.can_stop) {
        stopped.push_back(dependent);
      }
    }
    const auto keep_stopped = [this](std::vector<ServiceInfo>& list) {
      std::vector<ServiceInfo> kept;
      for (const auto& service : list) {
        const std::string status = host_.QueryService(service.name).status;
        if (status == "Stopped" || status == "StopPending") kept.push_back(service);
      }
      list = std::move(kept);
    };
    const std::uint32_t error = controller_stop(info.name);
    if (error != 0 && error != kServiceNotActive) {
      WriteError(
          is("Restart-Service") ? "Restart-Service" : "Stop-Service",
          "Service '" + Label(info) +
              "' cannot be stopped due to the following error: "
              "Cannot stop " +
              info.name + " service on computer '.'. (error " + std::to_string(error) +
              (error == kDependentServicesRunning ? ": a dependent service is running)" : ")"),
          action);
      keep_stopped(stopped);
      return stopped;
    }
    if (!ToBool(b.Get("NoWait")) && !wait_for(info.name, "Stopped", "StopPending", "stop")) {
      keep_stopped(stopped);
      return stopped;
    }
    keep_stopped(stopped);
    const std::string status = host_.QueryService(info.name).status;
    if (status == "Stopped" || status == "StopPending") stopped.push_back(info);
    return stopped;
  };

  for (const auto& service : names) {
    if (service.find_first_of("*?[") != std::string::npos) {
      Unsupported(call.name + " of the wildcard name " + service);
    }
    const ServiceInfo info = host_.QueryService(service);
    if (!info.exists) {
      WriteError(call.name, "Cannot find any service with service name '" + service + "'.", action);
      continue;
    }
    const bool force = ToBool(b.Get("Force"));
    if (is("Get-Service")) {
      Emit(*call.out, ServiceObject(info));
    } else if (is("Start-Service")) {
      start(info);
    } else if (is("Stop-Service")) {
      stop(info, force);
    } else {
      for (const auto& stopped : stop(info, force)) start(stopped);
    }
  }
  return true;
}

}  // namespace dxshim::test::node_standin::powershell
