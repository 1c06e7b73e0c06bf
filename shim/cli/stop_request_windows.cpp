// Windows half of StopRequest: a console control handler and the service's stop both set one
// event that Wait() waits for.
#include <windows.h>

#include <mutex>

#include "shim/cli/stop_request.h"

namespace dxshim {
namespace {

std::mutex reason_mutex;
std::string reason;
HANDLE stop_event = nullptr;  // manual reset: set once a stop is asked for
HANDLE done_event = nullptr;  // set when the StopRequest goes away (serving has ended)

void Set(const char* why) {
  {
    std::lock_guard lock(reason_mutex);
    if (reason.empty()) reason = why;
  }
  SetEvent(stop_event);
}

BOOL WINAPI OnConsoleControl(DWORD control) {
  switch (control) {
    case CTRL_C_EVENT:
      Set("Ctrl-C");
      return TRUE;
    case CTRL_BREAK_EVENT:
      Set("Ctrl-Break");
      return TRUE;
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
      // Windows ends the process when this handler returns (and after about 5 s regardless):
      // give the orderly shutdown that long.
      Set(control == CTRL_CLOSE_EVENT ? "console closed" : "logoff or shutdown");
      WaitForSingleObject(done_event, 4500);
      return TRUE;
    default:
      return FALSE;
  }
}

}  // namespace

StopRequest::StopRequest() {
  // Created once per process and reset for each instance: a console handler of an earlier
  // instance may still hold them.
  if (stop_event == nullptr) stop_event = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  if (done_event == nullptr) done_event = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  ResetEvent(stop_event);
  ResetEvent(done_event);
  SetConsoleCtrlHandler(OnConsoleControl, TRUE);
}

StopRequest::~StopRequest() {
  SetConsoleCtrlHandler(OnConsoleControl, FALSE);
  SetEvent(done_event);
  std::lock_guard lock(reason_mutex);
  reason.clear();
}

std::string StopRequest::Wait() {
  WaitForSingleObject(stop_event, INFINITE);
  std::lock_guard lock(reason_mutex);
  return reason;
}

void StopRequest::Request(const std::string& why) { Set(why.c_str()); }

}  // namespace dxshim
