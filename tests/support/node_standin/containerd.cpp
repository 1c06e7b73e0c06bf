// containerd.exe: serves the pipe of its config.toml and logs each client's process id.
#include <windows.h>

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/containerd_config.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/pipe_endpoint.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/service_runner.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

bool PipeServed(const std::wstring& pipe) {
  // Served: an instance waits for a client, or all are busy. (Wine does not enforce
  // FILE_FLAG_FIRST_PIPE_INSTANCE, so this is asked first.)
  return WaitNamedPipeW(pipe.c_str(), 1) != FALSE || GetLastError() == ERROR_SEM_TIMEOUT;
}

HANDLE CreateInstance(const std::wstring& pipe, bool first) {
  return CreateNamedPipeW(
      pipe.c_str(),
      PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
      PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT, PIPE_UNLIMITED_INSTANCES, 65536, 65536, 0,
      nullptr);
}

// Accepts clients until g_stop: the next instance is made before a connected one is closed, so
// that one always listens.
void ServePipe(const std::wstring& pipe, HANDLE listening, const std::wstring& connections_log) {
  const HANDLE connected_event = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  while (WaitForSingleObject(g_stop, 0) == WAIT_TIMEOUT) {
    if (listening == INVALID_HANDLE_VALUE) {  // could not make one: try again shortly
      listening = CreateInstance(pipe, false);
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
    if (connected) {
      ULONG client = 0;
      GetNamedPipeClientProcessId(listening, &client);
      AppendLine(connections_log, "connect " + std::to_string(client));
    } else {
      WaitForSingleObject(g_stop, 10);  // an unexpected failure must not spin
    }
    const HANDLE next = CreateInstance(pipe, false);
    DisconnectNamedPipe(listening);
    CloseHandle(listening);
    listening = next;
  }
  if (listening != INVALID_HANDLE_VALUE) CloseHandle(listening);
  CloseHandle(connected_event);
}

}  // namespace

DWORD Containerd(const std::wstring&, const std::function<void()>& ready) {
  LogStart(L"starts.log");
  const auto args = SplitCommandLine(GetCommandLineW());
  const auto config_flag = FlagValue(args, {L"--config", L"-config", L"--c", L"-c"});
  const std::wstring config =
      config_flag.value_or(ExpandEnvironment(L"%ProgramFiles%\\containerd\\config.toml"));
  const auto toml = ReadTextFile(config);
  if (!toml && config_flag) {
    std::fprintf(stderr, "containerd stand-in: failed to load TOML from %s\n",
                 Utf8FromWide(config.c_str()).c_str());
    return 1;
  }
  std::wstring pipe = L"\\\\.\\pipe\\containerd-containerd";
  if (const auto address = toml ? GrpcAddress(*toml) : std::nullopt) {
    pipe = Widen(*address);
    if (const auto from_url = PipePathOfEndpoint(pipe)) pipe = *from_url;
    for (auto& c : pipe) c = c == L'/' ? L'\\' : c;
  }
  const std::string pipe_text = Utf8FromWide(pipe.c_str());
  if (PipeServed(pipe)) {
    std::fprintf(stderr, "containerd stand-in: %s is served already\n", pipe_text.c_str());
    return 4;
  }
  const HANDLE first = CreateInstance(pipe, true);
  if (first == INVALID_HANDLE_VALUE) {
    std::fprintf(stderr, "containerd stand-in: cannot create %s (error %lu)\n", pipe_text.c_str(),
                 GetLastError());
    return 4;
  }
  std::thread server(ServePipe, pipe, first, FolderOf(SelfPath()) + L"\\connections.log");
  ready();
  server.join();  // until g_stop
  return 0;
}

}  // namespace dxshim::test::node_standin
