// Serving a named pipe to many clients, each on its own thread.
#include "tests/support/node_standin/pipe_server.h"

#include <thread>

#include "tests/support/node_standin/service_runner.h"

namespace dxshim::test::node_standin {

bool PipeServed(const std::wstring& pipe) {
  return WaitNamedPipeW(pipe.c_str(), 1) != FALSE || GetLastError() == ERROR_SEM_TIMEOUT;
}

HANDLE CreatePipeInstance(const std::wstring& pipe, bool first) {
  return CreateNamedPipeW(
      pipe.c_str(),
      PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
      PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT, PIPE_UNLIMITED_INSTANCES, 65536, 65536, 0,
      nullptr);
}

void ServePipe(const std::wstring& pipe, HANDLE listening, const PipeClientHandler& handler) {
  const HANDLE connected_event = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  while (WaitForSingleObject(g_stop, 0) == WAIT_TIMEOUT) {
    if (listening == INVALID_HANDLE_VALUE) {  // could not make one: try again shortly
      listening = CreatePipeInstance(pipe, false);
      if (listening == INVALID_HANDLE_VALUE) WaitForSingleObject(g_stop, 100);
      continue;
    }
    OVERLAPPED overlapped{};
    overlapped.hEvent = connected_event;
    ResetEvent(connected_event);
    bool connected = ConnectNamedPipe(listening, &overlapped) != FALSE;
    DWORD error = connected ? ERROR_SUCCESS : GetLastError();
    if (error == ERROR_IO_PENDING) {
      const HANDLE waits[] = {g_stop, connected_event};
      const bool stop = WaitForMultipleObjects(2, waits, FALSE, INFINITE) == WAIT_OBJECT_0;
      DWORD ignored = 0;
      if (stop) {
        CancelIo(listening);
        GetOverlappedResult(listening, &overlapped, &ignored, TRUE);
        break;
      }
      connected = GetOverlappedResult(listening, &overlapped, &ignored, FALSE) != FALSE;
      error = connected ? ERROR_SUCCESS : GetLastError();
    }
    // A client that connected before the wait began, or has already closed its end, was a client.
    connected = connected || error == ERROR_PIPE_CONNECTED || error == ERROR_NO_DATA;
    const HANDLE next = CreatePipeInstance(pipe, false);
    if (connected) {
      ULONG client = 0;
      GetNamedPipeClientProcessId(listening, &client);
      std::thread(handler, listening, client).detach();
    } else {
      WaitForSingleObject(g_stop, 10);  // an unexpected failure must not spin
      DisconnectNamedPipe(listening);
      CloseHandle(listening);
    }
    listening = next;
  }
  if (listening != INVALID_HANDLE_VALUE) CloseHandle(listening);
  CloseHandle(connected_event);
}

}  // namespace dxshim::test::node_standin
