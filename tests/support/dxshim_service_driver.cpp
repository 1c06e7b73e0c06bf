// Drives the real dxshim.exe as a Windows service through wine's service control manager (the test
// around it, dxshim_service_test.sh, writes the configuration and checks the log files):
//   dxshim-service-driver.exe DXSHIM_EXE CONFIG PIPE_NAME BROKEN_CONFIG
// (host paths). Registers "dxshim-test" as `DXSHIM_EXE serve --config CONFIG`, starts it, and
// checks that the service reports RUNNING only once \\.\pipe\PIPE_NAME is served, that STOP ends
// it with exit code 0 and closes the pipe; then the same with BROKEN_CONFIG, which must never be
// RUNNING and must stop with dxshim's exit code 2 as the service-specific error. Removes the
// services. Prints ok/FAILED lines.
#include <windows.h>

#include <cstdio>
#include <string>

#include "devices/windows/wide_text.h"

namespace {

int failures = 0;
void Check(bool ok, const std::string& what) {
  if (!ok) ++failures;
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  std::fflush(stdout);
}

// A host path as wine's programs name it (its Z: drive is the host's root).
std::wstring HostPath(const char* path) {
  std::string out = std::string("Z:") + path;
  for (auto& c : out) c = c == '/' ? '\\' : c;
  return dxshim::devices::windows::Widen(out);
}

bool PipeServed(const std::wstring& pipe) {
  // Served: an instance waits for a client (or all are busy). Not served: the name is unknown.
  return WaitNamedPipeW(pipe.c_str(), 1) != FALSE || GetLastError() == ERROR_SEM_TIMEOUT;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: dxshim-service-driver.exe DXSHIM_EXE CONFIG PIPE_NAME BROKEN_CONFIG\n");
    return 2;
  }
  const auto command = [&](const char* config) {
    return L"\"" + HostPath(argv[1]) + L"\" serve --config \"" + HostPath(config) + L"\"";
  };
  const std::wstring pipe = L"\\\\.\\pipe\\" + dxshim::devices::windows::Widen(argv[3]);
  const SC_HANDLE manager = OpenSCManagerW(nullptr, nullptr, SC_MANAGER_ALL_ACCESS);
  Check(manager != nullptr, "open the service control manager");
  if (!manager) return 1;
  SC_HANDLE service =
      CreateServiceW(manager, L"dxshim-test", L"dxshim (test)", SERVICE_ALL_ACCESS,
                     SERVICE_WIN32_OWN_PROCESS, SERVICE_DEMAND_START, SERVICE_ERROR_NORMAL,
                     command(argv[2]).c_str(), nullptr, nullptr, nullptr, nullptr, nullptr);
  Check(service != nullptr, "register dxshim.exe as a service");
  if (!service) return 1;
  Check(!PipeServed(pipe), "before it starts, nothing serves the pipe");

  // The manager's database may still be locked by wine's own start-up: retry a while.
  bool started = false;
  for (int i = 0; i < 300 && !started; ++i) {
    started = StartServiceW(service, 0, nullptr) != FALSE;
    if (!started && GetLastError() != ERROR_SERVICE_DATABASE_LOCKED) break;
    if (!started) Sleep(100);
  }
  Check(started, "start it" + (started ? "" : " (error " + std::to_string(GetLastError()) + ")"));
  SERVICE_STATUS status{};
  bool pending_seen = false;
  bool served_when_running = false;
  for (int i = 0; i < 6000; ++i) {  // up to 60 s (wine starts slowly on a busy machine)
    if (!QueryServiceStatus(service, &status)) break;
    pending_seen = pending_seen || status.dwCurrentState == SERVICE_START_PENDING;
    if (status.dwCurrentState == SERVICE_RUNNING) {
      served_when_running = PipeServed(pipe);
      break;
    }
    if (status.dwCurrentState == SERVICE_STOPPED) break;
    Sleep(10);
  }
  Check(status.dwCurrentState == SERVICE_RUNNING,
        "it reports RUNNING (state " + std::to_string(status.dwCurrentState) + ", exit code " +
            std::to_string(status.dwWin32ExitCode) + "/" +
            std::to_string(status.dwServiceSpecificExitCode) + ")");
  Check(pending_seen, "after START_PENDING");
  Check(served_when_running, "and the pipe is served the moment it does");
  Check((status.dwControlsAccepted & SERVICE_ACCEPT_STOP) != 0, "it accepts STOP");

  Check(ControlService(service, SERVICE_CONTROL_STOP, &status) != FALSE, "send STOP");
  for (int i = 0; i < 3000 && status.dwCurrentState != SERVICE_STOPPED; ++i) {
    Sleep(10);
    if (!QueryServiceStatus(service, &status)) break;
  }
  Check(status.dwCurrentState == SERVICE_STOPPED,
        "it reports STOPPED (state " + std::to_string(status.dwCurrentState) + ")");
  Check(status.dwWin32ExitCode == NO_ERROR,
        "with exit code 0 (" + std::to_string(status.dwWin32ExitCode) + ")");
  Check(!PipeServed(pipe), "and the pipe is closed");
  Check(DeleteService(service) != FALSE, "remove the service");
  CloseServiceHandle(service);

  // A configuration that does not load: the manager hears it from dxshim, not from a timeout.
  service = CreateServiceW(manager, L"dxshim-test-broken", L"dxshim (broken configuration)",
                           SERVICE_ALL_ACCESS, SERVICE_WIN32_OWN_PROCESS, SERVICE_DEMAND_START,
                           SERVICE_ERROR_NORMAL, command(argv[4]).c_str(), nullptr, nullptr,
                           nullptr, nullptr, nullptr);
  Check(service != nullptr, "register dxshim.exe with a broken configuration");
  if (!service) return 1;
  StartServiceW(service, 0, nullptr);  // may succeed or fail: the state below is what counts
  bool seen_running = false;
  for (int i = 0; i < 6000; ++i) {
    if (!QueryServiceStatus(service, &status)) break;
    seen_running = seen_running || status.dwCurrentState == SERVICE_RUNNING;
    if (status.dwCurrentState == SERVICE_STOPPED) break;
    Sleep(10);
  }
  Check(
      status.dwCurrentState == SERVICE_STOPPED && !seen_running,
      "it is never RUNNING and ends STOPPED (state " + std::to_string(status.dwCurrentState) + ")");
  Check(status.dwWin32ExitCode == ERROR_SERVICE_SPECIFIC_ERROR &&
            status.dwServiceSpecificExitCode == 2,
        "with dxshim's exit code 2 as the service-specific error (" +
            std::to_string(status.dwWin32ExitCode) + ", " +
            std::to_string(status.dwServiceSpecificExitCode) + ")");
  Check(DeleteService(service) != FALSE, "remove it");
  CloseServiceHandle(service);
  CloseServiceHandle(manager);
  std::printf("%s\n", failures == 0 ? "all passed" : "failures");
  return failures == 0 ? 0 : 1;
}
