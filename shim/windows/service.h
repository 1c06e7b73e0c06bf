// Windows only, no gRPC: dxshim as a Windows service. The service control handler reports
// START_PENDING, RUNNING, STOP_PENDING (with a wait hint inside what Windows allows at shutdown)
// and STOPPED, and turns STOP, SHUTDOWN and PRESHUTDOWN into one call of `stop` (the same path
// SIGTERM takes on Linux: streams cancelled, calls given their grace, socket/pipe closed).
#pragma once

#include <windows.h>

#include <functional>
#include <string>

namespace dxshim::windows {

struct ServiceCallbacks {
  std::function<int()> run;    // the service's work; returns the exit code
  std::function<void()> stop;  // asks run() to return; called at most once, from another thread
  DWORD stop_wait_hint_ms = 15000;
};

// Connects to the service control manager and runs `callbacks` as service `name`; returns run()'s
// exit code. Returns -1 with `not_a_service` set when the process was not started by the SCM
// (run from a console instead), so that the caller can run in the foreground.
int RunAsService(const std::string& name, ServiceCallbacks callbacks, bool& not_a_service);

}  // namespace dxshim::windows
