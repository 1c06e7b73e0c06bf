#include "shim/windows/service.h"

#include <atomic>
#include <mutex>
#include <vector>

#include "devices/windows/wide_text.h"

namespace dxshim::windows {
namespace {

// The SCM's callbacks carry no context pointer for ServiceMain: one service per process.
struct ServiceState {
  std::wstring name;
  ServiceCallbacks callbacks;
  SERVICE_STATUS_HANDLE handle = nullptr;
  SERVICE_STATUS status{};
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> running{false};
  std::mutex report_mutex;  // the control handler and the work both report
  int exit_code = 0;
};
ServiceState* g_state = nullptr;

void Report(DWORD state, DWORD wait_hint = 0) {
  static DWORD checkpoint = 1;
  std::lock_guard lock(g_state->report_mutex);
  auto& s = g_state->status;
  s.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
  s.dwCurrentState = state;
  s.dwControlsAccepted = state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN |
                                                        SERVICE_ACCEPT_PRESHUTDOWN
                                                  : 0;
  s.dwWin32ExitCode =
      state == SERVICE_STOPPED && g_state->exit_code != 0 ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
  s.dwServiceSpecificExitCode = static_cast<DWORD>(g_state->exit_code);
  s.dwWaitHint = wait_hint;
  s.dwCheckPoint = state == SERVICE_RUNNING || state == SERVICE_STOPPED ? 0 : checkpoint++;
  SetServiceStatus(g_state->handle, &s);
}

DWORD WINAPI Control(DWORD control, DWORD, LPVOID, LPVOID) {
  switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN:
    case SERVICE_CONTROL_PRESHUTDOWN:
      if (!g_state->stop_requested.exchange(true)) {
        Report(SERVICE_STOP_PENDING, g_state->callbacks.stop_wait_hint_ms);
        g_state->callbacks.stop();
      }
      return NO_ERROR;
    case SERVICE_CONTROL_INTERROGATE:
      return NO_ERROR;
    default:
      return ERROR_CALL_NOT_IMPLEMENTED;
  }
}

void WINAPI ServiceMain(DWORD, LPWSTR*) {
  g_state->handle = RegisterServiceCtrlHandlerExW(g_state->name.c_str(), Control, nullptr);
  if (!g_state->handle) return;
  Report(SERVICE_START_PENDING, g_state->callbacks.start_wait_hint_ms);
  g_state->exit_code = g_state->callbacks.run([] {
    if (!g_state->running.exchange(true) && !g_state->stop_requested) Report(SERVICE_RUNNING);
  });
  Report(SERVICE_STOPPED);
}

}  // namespace

int RunAsService(const std::string& name, ServiceCallbacks callbacks, bool& not_a_service) {
  ServiceState state;
  state.name = devices::windows::Widen(name);
  state.callbacks = std::move(callbacks);
  g_state = &state;
  std::vector<wchar_t> service_name(state.name.begin(), state.name.end());
  service_name.push_back(L'\0');
  const SERVICE_TABLE_ENTRYW table[] = {{service_name.data(), ServiceMain}, {nullptr, nullptr}};
  not_a_service = false;
  if (!StartServiceCtrlDispatcherW(table)) {
    not_a_service = GetLastError() == ERROR_FAILED_SERVICE_CONTROLLER_CONNECT;
    g_state = nullptr;
    return -1;
  }
  g_state = nullptr;
  return state.exit_code;
}

}  // namespace dxshim::windows
