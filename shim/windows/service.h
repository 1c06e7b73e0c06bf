// Windows only, no gRPC: dxshim as a Windows service. The service control handler reports
// START_PENDING until the work says it serves, then RUNNING (services that depend on dxshim,
// kubelet, start only then), STOP_PENDING (with a wait hint inside what Windows allows at
// shutdown) and STOPPED with the work's exit code; it turns STOP, SHUTDOWN and PRESHUTDOWN into
// one call of `stop` (the same path SIGTERM takes on Linux: streams cancelled, calls given their
// grace, pipe closed). Work that fails before it serves goes from START_PENDING to STOPPED, so
// the service start fails (install.ps1 then rolls back).
#pragma once

#include <windows.h>

#include <functional>
#include <string>

namespace dxshim::windows {

struct ServiceCallbacks {
  // The service's work; calls `ready` once it serves, returns the exit code.
  std::function<int(const std::function<void()>& ready)> run;
  std::function<void()> stop;  // asks run() to return; called at most once, from another thread
  DWORD start_wait_hint_ms = 30000;
  DWORD stop_wait_hint_ms = 15000;
};

// Connects to the service control manager and runs `callbacks` as service `name`; returns run()'s
// exit code. Returns -1 with `not_a_service` set when the process was not started by the SCM
// (run from a console instead), so that the caller can run in the foreground.
int RunAsService(const std::string& name, ServiceCallbacks callbacks, bool& not_a_service);

}  // namespace dxshim::windows
