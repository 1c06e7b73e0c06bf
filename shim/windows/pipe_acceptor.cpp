#include "shim/windows/pipe_acceptor.h"

#include <sddl.h>

#include <cctype>
#include <chrono>
#include <stdexcept>

#include "devices/windows/wide_text.h"
#include "shim/base/ascii_case.h"

namespace dxshim::windows {

using devices::windows::Widen;

namespace {

// A process's program file name, lower case ("" when it cannot be read).
std::string ProgramOf(ULONG pid) {
  const HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (!process) return "";
  wchar_t path[MAX_PATH * 2];
  DWORD size = MAX_PATH * 2;
  std::string name;
  if (QueryFullProcessImageNameW(process, 0, path, &size)) {
    // Only compared with known program names and shown: a surrogate is shown, not refused.
    name = devices::windows::Narrow(path, size, devices::windows::Surrogates::kShow);
    const auto slash = name.find_last_of("\\/");
    if (slash != std::string::npos) name = name.substr(slash + 1);
    name = ToLowerAscii(name);
  }
  CloseHandle(process);
  return name;
}

// The process at the other end of a connected pipe instance.
socket_bridge::BridgeClient ClientOf(HANDLE pipe) {
  ULONG pid = 0;
  if (!GetNamedPipeClientProcessId(pipe, &pid)) return {};
  return {static_cast<std::uint32_t>(pid), ProgramOf(pid)};
}

}  // namespace

PipeAcceptor::PipeAcceptor(std::string pipe_path, std::string sddl, DialBackend dial_backend)
    : path_(Widen(pipe_path)), sddl_(std::move(sddl)), dial_backend_(std::move(dial_backend)) {}

PipeAcceptor::~PipeAcceptor() {
  Stop();
  if (security_.lpSecurityDescriptor) LocalFree(security_.lpSecurityDescriptor);
}

HANDLE PipeAcceptor::CreateInstance(bool first, DWORD& error) {
  const DWORD open_mode = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED |
                          (first ? static_cast<DWORD>(FILE_FLAG_FIRST_PIPE_INSTANCE) : 0);
  const HANDLE pipe =
      CreateNamedPipeW(path_.c_str(), open_mode,
                       PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                       PIPE_UNLIMITED_INSTANCES, 64 * 1024, 64 * 1024, 0, &security_);
  error = pipe == INVALID_HANDLE_VALUE ? GetLastError() : 0;
  return pipe;
}

HANDLE PipeAcceptor::FirstInstance(DWORD& error) {
  // Windows refuses a first instance of a name another process serves
  // (FILE_FLAG_FIRST_PIPE_INSTANCE); wine does not, so whether one serves it is asked first.
  if (WaitNamedPipeW(path_.c_str(), 1) || GetLastError() == ERROR_SEM_TIMEOUT) {
    error = ERROR_ACCESS_DENIED;
    return INVALID_HANDLE_VALUE;
  }
  return CreateInstance(true, error);
}

void PipeAcceptor::Start() {
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(Widen(sddl_).c_str(), SDDL_REVISION_1,
                                                            &descriptor, nullptr)) {
    throw std::runtime_error("pipe security descriptor '" + sddl_ + "' is not valid SDDL (error " +
                             std::to_string(GetLastError()) + ")");
  }
  security_.nLength = sizeof(security_);
  security_.lpSecurityDescriptor = descriptor;
  security_.bInheritHandle = FALSE;
  DWORD error = 0;
  HANDLE first = FirstInstance(error);
  const auto deadline = std::chrono::steady_clock::now() + wait_for_pipe_;
  bool said = false;
  while (first == INVALID_HANDLE_VALUE && error == ERROR_ACCESS_DENIED &&
         std::chrono::steady_clock::now() < deadline) {
    if (!said && on_wait_) on_wait_();
    said = true;
    ::Sleep(20);
    first = FirstInstance(error);
  }
  if (first == INVALID_HANDLE_VALUE) {
    throw std::runtime_error(error == ERROR_ACCESS_DENIED
                                 ? "pipe " + devices::windows::Narrow(path_.data(), path_.size()) +
                                       " is already served by another process"
                                 : "cannot create pipe " +
                                       devices::windows::Narrow(path_.data(), path_.size()) +
                                       " (error " + std::to_string(error) + ")");
  }
  stop_ = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  thread_ = std::thread([this, first] { AcceptLoop(first); });
}

void PipeAcceptor::AcceptLoop(HANDLE listening) {
  OVERLAPPED ov{};
  ov.hEvent = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  while (listening != INVALID_HANDLE_VALUE) {
    const HANDLE event = ov.hEvent;
    ov = OVERLAPPED{};
    ov.hEvent = event;
    ResetEvent(event);
    bool connected = ConnectNamedPipe(listening, &ov) != FALSE;
    const DWORD error = GetLastError();
    if (!connected && error == ERROR_PIPE_CONNECTED) {
      connected = true;  // the client came between CreateNamedPipe and ConnectNamedPipe
    } else if (!connected && error == ERROR_IO_PENDING) {
      const HANDLE events[] = {ov.hEvent, stop_};
      if (WaitForMultipleObjects(2, events, FALSE, INFINITE) != WAIT_OBJECT_0) {
        CancelIoEx(listening, &ov);
      }
      DWORD ignored = 0;
      connected = GetOverlappedResult(listening, &ov, &ignored, TRUE) != FALSE;
    }
    if (WaitForSingleObject(stop_, 0) == WAIT_OBJECT_0) {
      CloseHandle(listening);
      break;
    }
    HANDLE client = connected ? listening : INVALID_HANDLE_VALUE;
    if (!connected) CloseHandle(listening);
    // A new instance waits for the next client before this one is handed over.
    DWORD create_error = 0;
    listening = CreateInstance(false, create_error);
    if (client == INVALID_HANDLE_VALUE) continue;
    const auto who = ClientOf(client);
    if (on_client_) on_client_(who.program);
    std::string served_as;
    const SOCKET backend = dial_backend_(served_as);
    if (backend == INVALID_SOCKET) {
      DisconnectNamedPipe(client);
      CloseHandle(client);
      continue;
    }
    bridges_.Add(client, backend, {}, backend_connections_.Add(std::move(served_as), who));
  }
  CloseHandle(ov.hEvent);
}

void PipeAcceptor::Stop() {
  if (!stop_) return;
  SetEvent(stop_);
  if (thread_.joinable()) thread_.join();
  bridges_.StopAll();
  CloseHandle(stop_);
  stop_ = nullptr;
}

}  // namespace dxshim::windows
