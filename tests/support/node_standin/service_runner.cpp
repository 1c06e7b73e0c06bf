// A stand-in as a service (START_PENDING, RUNNING, STOP_PENDING, STOPPED) or in the foreground.
#include "tests/support/node_standin/service_runner.h"

// clang-format off
#include <windows.h>
#include <tlhelp32.h>
// clang-format on

#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

HANDLE g_stop = nullptr;  // manual-reset: the SCM's STOP or SHUTDOWN, or a console's Ctrl-C

namespace {

struct ServiceState {
  Work work;
  SERVICE_STATUS_HANDLE handle = nullptr;
  SERVICE_STATUS status{};
  std::mutex mutex;  // the control handler and the work both report
  DWORD checkpoint = 1;
  bool stop_requested = false;
  DWORD exit_code = 0;
};
ServiceState g_service;

void Report(DWORD state, DWORD exit_code = 0) {
  std::lock_guard lock(g_service.mutex);
  if (state == SERVICE_RUNNING && g_service.stop_requested) return;  // stopping already
  const bool pending = state == SERVICE_START_PENDING || state == SERVICE_STOP_PENDING;
  auto& s = g_service.status;
  s.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
  s.dwCurrentState = state;
  s.dwControlsAccepted =
      state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
  s.dwWin32ExitCode = exit_code != 0 ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
  s.dwServiceSpecificExitCode = exit_code;
  s.dwCheckPoint = pending ? g_service.checkpoint++ : 0;
  s.dwWaitHint = pending ? 10000 : 0;
  SetServiceStatus(g_service.handle, &s);
}

DWORD WINAPI ServiceControl(DWORD control, DWORD, LPVOID, LPVOID) {
  switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN: {
      bool first = false;
      {
        std::lock_guard lock(g_service.mutex);
        first = !g_service.stop_requested;
        g_service.stop_requested = true;
      }
      if (first) {
        Report(SERVICE_STOP_PENDING);
        SetEvent(g_stop);
      }
      return NO_ERROR;
    }
    case SERVICE_CONTROL_INTERROGATE:
      return NO_ERROR;
    default:
      return ERROR_CALL_NOT_IMPLEMENTED;
  }
}

void WINAPI ServiceMain(DWORD argc, LPWSTR* argv) {
  // argv[0] is the name the service was started as (the table's own entry is "").
  const std::wstring name = argc > 0 && argv[0] ? argv[0] : L"";
  g_service.handle = RegisterServiceCtrlHandlerExW(name.c_str(), ServiceControl, nullptr);
  if (!g_service.handle) {
    g_service.exit_code = 1;
    return;
  }
  Report(SERVICE_START_PENDING);
  g_service.exit_code = g_service.work(name, [] { Report(SERVICE_RUNNING); });
  Report(SERVICE_STOPPED, g_service.exit_code);
}

BOOL WINAPI ConsoleStop(DWORD) {
  SetEvent(g_stop);
  return TRUE;
}

// Whether the parent process is services.exe (a service's is; a console's or NSSM's child's is
// not). Unknown (no process list): assumed, so that the dispatcher decides.
bool StartedByServiceManager() {
  const HANDLE snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (snapshot == INVALID_HANDLE_VALUE) return true;
  PROCESSENTRY32W entry{};
  entry.dwSize = sizeof(entry);
  std::vector<std::pair<DWORD, std::wstring>> processes;
  DWORD parent = 0;
  for (bool more = Process32FirstW(snapshot, &entry) != FALSE; more;
       more = Process32NextW(snapshot, &entry) != FALSE) {
    if (entry.th32ProcessID == GetCurrentProcessId()) parent = entry.th32ParentProcessID;
    processes.emplace_back(entry.th32ProcessID, entry.szExeFile);
  }
  CloseHandle(snapshot);
  for (const auto& [pid, exe] : processes) {
    if (pid == parent && parent != 0) return Lower(FileNameOf(exe)) == L"services.exe";
  }
  return false;
}

}  // namespace

int Run(const char* role, const Work& work, bool service_only) {
  g_stop = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  if (StartedByServiceManager()) {
    g_service.work = work;
    static wchar_t own_process[] = L"";  // ignored for SERVICE_WIN32_OWN_PROCESS
    const SERVICE_TABLE_ENTRYW table[] = {{own_process, ServiceMain}, {nullptr, nullptr}};
    if (StartServiceCtrlDispatcherW(table)) return static_cast<int>(g_service.exit_code);
    if (GetLastError() != ERROR_FAILED_SERVICE_CONTROLLER_CONNECT) {
      std::fprintf(stderr, "%s stand-in: the service dispatcher failed (error %lu)\n", role,
                   GetLastError());
      return 1;
    }
  }
  if (service_only) {
    std::fprintf(stderr,
                 "%s stand-in: runs only as a service (create one whose ImagePath is this "
                 "program, with Parameters\\Application)\n",
                 role);
    return 2;
  }
  SetConsoleCtrlHandler(ConsoleStop, TRUE);
  return static_cast<int>(work(L"", [] {}));
}

}  // namespace dxshim::test::node_standin
