// containerd-shim-runhcs-v1.exe: a task's shim, started by the containerd stand-in as hcsshim's
// is: `--namespace NS --address A --publish-binary B --id ID start`, which starts the same
// command line with `serve --socket PIPE` in a process of its own, waits until it serves PIPE,
// prints PIPE and exits (hcsshim cmd/containerd-shim-runhcs-v1/start.go), so that the shim that
// serves is nobody's child: NSSM's kill_process_tree, ending containerd's service, does not reach
// it, and the containers outlive containerd's restarts. `serve` reads TTRPC_ADDRESS once, at start
// (hcsshim v0.11.8 cmd/containerd-shim-runhcs-v1/serve.go), serves containerd.task.v2.Task on
// PIPE over TTRPC, runs the task as a child (`--task ID`, which waits), and when that child ends
// publishes /tasks/exit to the TTRPC_ADDRESS it read (event_publisher.h).
#include <windows.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/containerd_messages.h"
#include "tests/support/node_standin/event_publisher.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/grpc_call.h"
#include "tests/support/node_standin/pipe_server.h"
#include "tests/support/node_standin/pipe_stream.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/service_runner.h"
#include "tests/support/node_standin/ttrpc.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

// The one task a shim runs (hcsshim serves a pod's containers from one shim; the stand-in, one).
class Task : public std::enable_shared_from_this<Task> {
 public:
  Task(std::string ns, std::string id, std::string ttrpc_address, std::wstring log)
      : ns_(std::move(ns)),
        id_(std::move(id)),
        ttrpc_address_(std::move(ttrpc_address)),
        log_(std::move(log)) {}

  TtrpcStatus Handle(const TtrpcRequest& request, std::string& payload) {
    if (request.service != kShimTaskService)
      return {kGrpcUnimplemented, "service " + request.service + ": not implemented"};
    std::lock_guard lock(mutex_);
    if (request.method == "Create") return Create(payload);
    if (request.method == "Start") return Start(payload);
    if (request.method == "Kill") return Kill();
    if (request.method == "Delete") return Delete(payload);
    if (request.method == "Shutdown") {
      shutdown_ = true;  // the process ends once containerd closes the connection
      return {};
    }
    return {kGrpcUnimplemented, request.method + ": not implemented"};
  }
  bool shutdown() const { return shutdown_; }

 private:
  TtrpcStatus Create(std::string& payload) {
    if (process_) return {kGrpcAlreadyExists, "task " + id_ + ": already exists"};
    // The container's process, created suspended: Start resumes it (runhcs: create, then start).
    std::wstring command = L"\"" + SelfPath() + L"\" --task " + QuoteArgument(Widen(id_));
    STARTUPINFOW startup{};
    startup.cb = sizeof(startup);
    PROCESS_INFORMATION child{};
    if (!CreateProcessW(nullptr, command.data(), nullptr, nullptr, FALSE, CREATE_SUSPENDED, nullptr,
                        nullptr, &startup, &child)) {
      return {kGrpcInternal,
              "cannot start the task (error " + std::to_string(GetLastError()) + ")"};
    }
    process_ = child.hProcess;
    thread_ = child.hThread;
    pid_ = child.dwProcessId;
    payload = EncodePid(pid_);
    return {};
  }

  TtrpcStatus Start(std::string& payload) {
    if (!process_) return {kGrpcNotFound, "task " + id_ + " not found"};
    if (started_) return {kGrpcFailedPrecondition, "task " + id_ + ": already started"};
    started_ = true;
    ResumeThread(thread_);
    std::thread([self = shared_from_this()] { self->Watch(); }).detach();
    payload = EncodePid(pid_);
    return {};
  }

  TtrpcStatus Kill() {
    if (!process_) return {kGrpcNotFound, "task " + id_ + " not found"};
    if (exited_) return {kGrpcNotFound, "process already finished: not found"};
    TerminateProcess(process_, 1);  // any signal ends the stand-in's task, with exit code 1
    return {};
  }

  TtrpcStatus Delete(std::string& payload) {
    if (!process_) return {kGrpcNotFound, "task " + id_ + " not found"};
    if (started_ && !exited_) return {kGrpcFailedPrecondition, "task is running"};
    payload = EncodeShimDeleteResponse(pid_, exit_code_);
    return {};
  }

  // Waits for the task to end, then publishes /tasks/exit (api/events/task.proto TaskExit).
  void Watch() {
    WaitForSingleObject(process_, INFINITE);
    TaskExitEvent exit{id_, id_, pid_, 0};
    {
      std::lock_guard lock(mutex_);
      DWORD code = 0;
      GetExitCodeProcess(process_, &code);
      exit_code_ = code;
      exited_ = true;
      exit.exit_status = code;
    }
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    PublishEvent(ttrpc_address_,
                 {now, ns_, kTaskExitTopic, kTaskExitType, EncodeTaskExit(exit, now)}, id_, log_);
  }

  const std::string ns_;
  const std::string id_;
  const std::string ttrpc_address_;
  const std::wstring log_;
  std::mutex mutex_;
  HANDLE process_ = nullptr;
  HANDLE thread_ = nullptr;
  DWORD pid_ = 0;
  bool started_ = false;
  bool exited_ = false;
  DWORD exit_code_ = 0;
  std::atomic<bool> shutdown_ = false;
};

}  // namespace

namespace {

// `start`: the serving shim started detached with the same environment, then PIPE printed once
// it is served; 0, or 1 when it does not come up in 30 s.
DWORD StartServing(const std::string& ns, const std::string& id) {
  const std::string address =
      "\\\\.\\pipe\\ProtectedPrefix\\Administrators\\containerd-shim-" + ns + "-" + id + "-pipe";
  std::wstring command = GetCommandLineW();
  const auto at = command.rfind(L" start");
  if (at == std::wstring::npos) return 1;
  command = command.substr(0, at) + L" serve --socket " + QuoteArgument(Widen(address));
  STARTUPINFOW startup{};
  startup.cb = sizeof(startup);
  PROCESS_INFORMATION process{};
  std::vector<wchar_t> line(command.begin(), command.end());
  line.push_back(L'\0');
  if (!CreateProcessW(nullptr, line.data(), nullptr, nullptr, FALSE,
                      DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP, nullptr, nullptr, &startup,
                      &process)) {
    std::fprintf(stderr, "shim stand-in: cannot start its serving shim (error %lu)\n",
                 GetLastError());
    return 1;
  }
  CloseHandle(process.hThread);
  CloseHandle(process.hProcess);
  const std::wstring pipe = Widen(address);
  for (int i = 0; i < 300; ++i) {
    if (WaitNamedPipeW(pipe.c_str(), 1) || GetLastError() == ERROR_SEM_TIMEOUT) {
      std::printf("%s\n", address.c_str());
      return 0;
    }
    Sleep(100);
  }
  std::fprintf(stderr, "shim stand-in: its serving shim does not serve %s\n", address.c_str());
  return 1;
}

}  // namespace

DWORD Shim(const std::wstring&, const std::function<void()>& ready) {
  {
    const auto words = SplitCommandLine(GetCommandLineW());
    const bool start = std::find(words.begin(), words.end(), L"start") != words.end() &&
                       std::find(words.begin(), words.end(), L"serve") == words.end();
    const auto id = FlagValue(words, {L"--id", L"-id"});
    const auto ns = FlagValue(words, {L"--namespace", L"-namespace"});
    if (start && id)
      return StartServing(Utf8FromWide(ns.value_or(L"").c_str()), Utf8FromWide(id->c_str()));
  }
  LogStart(L"shim.log");
  const std::wstring log = FolderOf(SelfPath()) + L"\\shim.log";
  // serve.go: os.Getenv(TTRPC_ADDRESS), once; the publisher keeps it for the shim's life.
  std::wstring ttrpc_address(32768, L'\0');
  ttrpc_address.resize(GetEnvironmentVariableW(L"TTRPC_ADDRESS", ttrpc_address.data(),
                                               static_cast<DWORD>(ttrpc_address.size())));
  const auto args = SplitCommandLine(GetCommandLineW());
  const auto value = [&args](const wchar_t* name) {
    const std::wstring flag = name;
    return Utf8FromWide(FlagValue(args, {L"--" + flag, L"-" + flag}).value_or(L"").c_str());
  };
  const std::string ns = value(L"namespace");
  const std::string id = value(L"id");
  const std::string socket = value(L"socket");
  bool serve = false;
  for (const auto& arg : args) serve = serve || arg == L"serve";
  AppendLine(log, "ttrpc-address " + id + " " + Utf8FromWide(ttrpc_address.c_str()));
  if (!serve || id.empty()) {
    std::fprintf(
        stderr,
        "shim stand-in: only `--id ID start` and `--id ID serve --socket PIPE` are played\n");
    return 1;
  }
  if (socket.rfind("\\\\.\\pipe", 0) != 0) {  // serve.go
    std::fprintf(stderr, "socket is required to be pipe address\n");
    return 1;
  }
  const std::wstring pipe = Widen(socket);
  const HANDLE first = CreatePipeInstance(pipe, true);
  if (first == INVALID_HANDLE_VALUE) {
    std::fprintf(stderr, "shim stand-in: cannot serve %s (error %lu)\n", socket.c_str(),
                 GetLastError());
    return 1;
  }
  // Shared with the connections' threads, which may outlive this function by a moment.
  const auto task = std::make_shared<Task>(ns, id, Utf8FromWide(ttrpc_address.c_str()), log);
  std::thread server(ServePipe, pipe, first, [task](HANDLE connection, ULONG) {
    PipeStream stream(connection);
    std::string why;
    ServeTtrpc(
        stream,
        [&](const TtrpcRequest& request, std::string& payload) {
          return task->Handle(request, payload);
        },
        why);
    if (task->shutdown()) SetEvent(g_stop);
  });
  ready();
  server.join();  // until g_stop: Shutdown, or Ctrl-C
  return 0;
}

}  // namespace dxshim::test::node_standin
