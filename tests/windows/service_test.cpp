// The Windows service glue (shim/windows/service.*) and the Windows StopRequest, wired as
// `dxshim serve` wires them (the service's stop asks StopRequest, the work waits on it),
// cross-compiled with mingw and run under wine, whose service control manager starts and stops
// real services:
//   service-test.exe drive     installs itself as service "dxshim-test", starts it, stops it,
//                              checks every step, removes it; prints ok/FAILED lines
//   service-test.exe console   checks that a console start is told it is not a service, and
//                              that a console's Ctrl-C and a Request() end StopRequest::Wait
//   service-test.exe           (as started by the SCM) the service: records its states in
//                              state.txt next to the executable
#include "shim/windows/service.h"

#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "shim/cli/stop_request.h"

namespace {

std::wstring StateFile() {
  wchar_t path[MAX_PATH] = {};
  GetModuleFileNameW(nullptr, path, MAX_PATH);
  std::wstring p(path);
  return p.substr(0, p.find_last_of(L'\\') + 1) + L"state.txt";
}

void Record(const char* state) {
  FILE* f = _wfopen(StateFile().c_str(), L"a");
  if (!f) return;
  std::fprintf(f, "%s\n", state);
  std::fclose(f);
}

std::string ReadState() {
  FILE* f = _wfopen(StateFile().c_str(), L"r");
  if (!f) return "";
  std::string text;
  char buf[256];
  while (std::fgets(buf, sizeof(buf), f)) text += buf;
  std::fclose(f);
  return text;
}

int failures = 0;
void Check(bool ok, const std::string& what) {
  if (!ok) ++failures;
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  std::fflush(stdout);
}

DWORD WaitForState(SC_HANDLE service, DWORD wanted, SERVICE_STATUS& status) {
  for (int i = 0; i < 200; ++i) {  // up to 20 s
    if (!QueryServiceStatus(service, &status)) return 0;
    if (status.dwCurrentState == wanted) return wanted;
    Sleep(100);
  }
  return status.dwCurrentState;
}

int Drive() {
  _wremove(StateFile().c_str());
  wchar_t self[MAX_PATH] = {};
  GetModuleFileNameW(nullptr, self, MAX_PATH);
  const SC_HANDLE manager = OpenSCManagerW(nullptr, nullptr, SC_MANAGER_ALL_ACCESS);
  Check(manager != nullptr, "open the service control manager");
  if (!manager) return 1;
  SC_HANDLE service = OpenServiceW(manager, L"dxshim-test", SERVICE_ALL_ACCESS);
  if (service) {  // left over from an interrupted run
    DeleteService(service);
    CloseServiceHandle(service);
  }
  service = CreateServiceW(manager, L"dxshim-test", L"dxshim test service", SERVICE_ALL_ACCESS,
                           SERVICE_WIN32_OWN_PROCESS, SERVICE_DEMAND_START, SERVICE_ERROR_NORMAL,
                           self, nullptr, nullptr, nullptr, nullptr, nullptr);
  Check(service != nullptr, "create the service");
  if (!service) return 1;
  SERVICE_STATUS status{};
  Check(StartServiceW(service, 0, nullptr) != FALSE, "start it");
  const DWORD running = WaitForState(service, SERVICE_RUNNING, status);
  Check(running == SERVICE_RUNNING, "it reports RUNNING (state " + std::to_string(running) + ")");
  Check((status.dwControlsAccepted & SERVICE_ACCEPT_STOP) &&
            (status.dwControlsAccepted & SERVICE_ACCEPT_SHUTDOWN),
        "it accepts STOP and SHUTDOWN");
  for (int i = 0; i < 100 && ReadState().find("running") == std::string::npos; ++i) Sleep(50);
  Check(ReadState() == "running\n", "its work runs");
  Check(ControlService(service, SERVICE_CONTROL_STOP, &status) != FALSE, "send STOP");
  const DWORD stopped = WaitForState(service, SERVICE_STOPPED, status);
  Check(stopped == SERVICE_STOPPED, "it reports STOPPED (state " + std::to_string(stopped) + ")");
  Check(status.dwWin32ExitCode == NO_ERROR,
        "with exit code 0 (" + std::to_string(status.dwWin32ExitCode) + ")");
  Check(ReadState() == "running\nstop requested\nstopped: service stop\n",
        "stop reached the work, which returned (state.txt: " + ReadState() + ")");
  Check(DeleteService(service) != FALSE, "remove it");
  CloseServiceHandle(service);

  // Work that fails before it serves: never RUNNING (so kubelet, which depends on dxshim, does not
  // start against nothing, and install.ps1's Start-Service fails and rolls back), STOPPED with its
  // exit code as the service-specific error.
  const std::wstring failing = L"\"" + std::wstring(self) + L"\" fail";
  service = OpenServiceW(manager, L"dxshim-test-fail", SERVICE_ALL_ACCESS);
  if (service) {
    DeleteService(service);
    CloseServiceHandle(service);
  }
  service = CreateServiceW(manager, L"dxshim-test-fail", L"dxshim failing test service",
                           SERVICE_ALL_ACCESS, SERVICE_WIN32_OWN_PROCESS, SERVICE_DEMAND_START,
                           SERVICE_ERROR_NORMAL, failing.c_str(), nullptr, nullptr, nullptr,
                           nullptr, nullptr);
  Check(service != nullptr, "create a service whose work fails before serving");
  if (!service) return 1;
  _wremove(StateFile().c_str());
  StartServiceW(service, 0, nullptr);
  bool seen_running = false;
  for (int i = 0; i < 200; ++i) {
    if (!QueryServiceStatus(service, &status)) break;
    seen_running = seen_running || status.dwCurrentState == SERVICE_RUNNING;
    if (status.dwCurrentState == SERVICE_STOPPED && ReadState().find("failed") != std::string::npos)
      break;
    Sleep(20);
  }
  Check(status.dwCurrentState == SERVICE_STOPPED && !seen_running,
        "it goes from START_PENDING to STOPPED, never RUNNING");
  Check(status.dwWin32ExitCode == ERROR_SERVICE_SPECIFIC_ERROR &&
            status.dwServiceSpecificExitCode == 3,
        "with its exit code as the service-specific error (" +
            std::to_string(status.dwWin32ExitCode) + ", " +
            std::to_string(status.dwServiceSpecificExitCode) + ")");
  Check(DeleteService(service) != FALSE, "remove it");
  CloseServiceHandle(service);
  CloseServiceHandle(manager);
  std::printf("%s\n", failures == 0 ? "all passed" : "failures");
  return failures == 0 ? 0 : 1;
}

// A console start: StopRequest ends on Request from another thread, and on Ctrl-C (where the
// platform can send one).
void ConsoleStops() {
  {
    dxshim::StopRequest stop;
    std::thread asker([&stop] {
      Sleep(50);
      stop.Request("asked");
    });
    const std::string reason = stop.Wait();
    asker.join();
    Check(reason == "asked", "Request from another thread ends the wait (" + reason + ")");
  }
  dxshim::StopRequest stop;
  if (AllocConsole() && GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0)) {
    const std::string reason = stop.Wait();
    Check(reason == "Ctrl-C", "Ctrl-C in the console ends the wait (" + reason + ")");
  } else {
    std::printf("skipped: Ctrl-C through a console (this platform could not send one)\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "drive") return Drive();
  std::optional<dxshim::StopRequest> stop;
  stop.emplace();
  dxshim::windows::ServiceCallbacks callbacks;
  const bool fail = argc > 1 && std::string(argv[1]) == "fail";
  callbacks.run = [&stop, fail](const std::function<void()>& ready) {
    if (fail) {
      Sleep(1000);  // long enough for the driver to see RUNNING, were it reported
      Record("failed before serving");
      return 3;
    }
    Record("running");
    ready();
    Record(("stopped: " + stop->Wait()).c_str());
    return 0;
  };
  callbacks.stop = [&stop] {
    Record("stop requested");
    stop->Request("service stop");
  };
  bool not_a_service = false;
  const int code = dxshim::windows::RunAsService("dxshim-test", callbacks, not_a_service);
  if (argc > 1 && std::string(argv[1]) == "console") {
    Check(code == -1 && not_a_service, "started from a console, it is told it is not a service");
    stop.reset();
    ConsoleStops();
    return failures == 0 ? 0 : 1;
  }
  return code < 0 ? 1 : code;
}
