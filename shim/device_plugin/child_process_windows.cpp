// Windows half of child_process.h.
// clang-format off
#include <winsock2.h>
#include <windows.h>
// clang-format on

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices/windows/child_run.h"
#include "devices/windows/wide_text.h"
#include "shim/device_plugin/child_process.h"

namespace dxshim::device_plugin {
namespace {

using devices::windows::AppendArgument;
using devices::windows::OwnedHandle;
using devices::windows::Widen;

std::runtime_error Failed(const char* what) {
  return std::runtime_error(std::string(what) + " failed (error " + std::to_string(GetLastError()) +
                            ")");
}

}  // namespace

struct ChildProcess::Handles {
  OwnedHandle job;
  OwnedHandle process;
  DWORD pid = 0;
  OwnedHandle log;     // read end of its stderr
  OwnedHandle notify;  // write end of its stdin
  std::atomic<bool> exited{false};
};

ChildProcess::ChildProcess(const std::vector<std::string>& args)
    : handles_(std::make_unique<Handles>()) {
  // The job first: a child that exists outside it for a moment could outlive a crash.
  handles_->job.h = CreateJobObjectW(nullptr, nullptr);
  if (!handles_->job.h) throw Failed("CreateJobObject");
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!SetInformationJobObject(handles_->job.h, JobObjectExtendedLimitInformation, &limits,
                               sizeof limits)) {
    throw Failed("SetInformationJobObject");
  }
  // The pipes: the child's ends inheritable, ours not.
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  OwnedHandle log_write, notify_read;
  if (!CreatePipe(&handles_->log.h, &log_write.h, &inherit, 0) ||
      !CreatePipe(&notify_read.h, &handles_->notify.h, &inherit, 0)) {
    throw Failed("CreatePipe");
  }
  SetHandleInformation(handles_->log.h, HANDLE_FLAG_INHERIT, 0);
  SetHandleInformation(handles_->notify.h, HANDLE_FLAG_INHERIT, 0);
  // Notify() runs on the relay thread: writes to a full pipe fail instead of waiting.
  DWORD no_wait = PIPE_NOWAIT;
  SetNamedPipeHandleState(handles_->notify.h, &no_wait, nullptr, nullptr);

  const auto self = devices::windows::ThisProgramPath();
  if (self.empty()) throw Failed("GetModuleFileName");
  std::wstring line;
  AppendArgument(line, self);
  for (const auto& arg : args) AppendArgument(line, Widen(arg));

  // Only the two pipe ends are inherited, whatever else is inheritable in this process.
  HANDLE inherited[] = {notify_read.h, log_write.h};
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
  std::vector<char> attributes(size);
  auto* list = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attributes.data());
  if (!InitializeProcThreadAttributeList(list, 1, 0, &size)) {
    throw Failed("InitializeProcThreadAttributeList");
  }
  // Without the list the child would inherit every inheritable handle here: not started then.
  if (!UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited,
                                 sizeof inherited, nullptr, nullptr)) {
    const auto error = Failed("UpdateProcThreadAttribute(PROC_THREAD_ATTRIBUTE_HANDLE_LIST)");
    DeleteProcThreadAttributeList(list);
    throw error;
  }
  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = notify_read.h;
  startup.StartupInfo.hStdOutput = log_write.h;
  startup.StartupInfo.hStdError = log_write.h;
  startup.lpAttributeList = list;
  PROCESS_INFORMATION info{};
  // No console of its own (a service has none to share, and Ctrl-C in a console is serve's to
  // handle: it stops the child itself); suspended until it is in the job.
  const BOOL created =
      CreateProcessW(nullptr, line.data(), nullptr, nullptr, TRUE,
                     CREATE_SUSPENDED | CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT, nullptr,
                     nullptr, &startup.StartupInfo, &info);
  DeleteProcThreadAttributeList(list);
  if (!created) throw Failed("CreateProcess");
  handles_->process.h = info.hProcess;
  handles_->pid = info.dwProcessId;
  OwnedHandle thread(info.hThread);
  if (!AssignProcessToJobObject(handles_->job.h, info.hProcess)) {
    const auto error = Failed("AssignProcessToJobObject");
    TerminateProcess(info.hProcess, 1);
    throw error;
  }
  ResumeThread(info.hThread);
}

ChildProcess::~ChildProcess() {
  if (!handles_->exited) {
    Kill();
    Wait();
  }
  // Closing the job's only handle ends whatever is still in it.
}

long ChildProcess::id() const { return static_cast<long>(handles_->pid); }

long ChildProcess::ReadLog(char* buffer, std::size_t size) {
  DWORD read = 0;
  if (!ReadFile(handles_->log.h, buffer, static_cast<DWORD>(size), &read, nullptr)) return 0;
  return static_cast<long>(read);
}

void ChildProcess::Notify() {
  if (!handles_->notify.h) return;
  const char byte = 'k';
  DWORD written = 0;
  WriteFile(handles_->notify.h, &byte, 1, &written, nullptr);
}

void ChildProcess::CloseInput() { handles_->notify.Close(); }

void ChildProcess::Kill() {
  if (!handles_->exited) TerminateJobObject(handles_->job.h, 1);
}

std::string ChildProcess::Wait() {
  WaitForSingleObject(handles_->process.h, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(handles_->process.h, &code);
  handles_->exited = true;
  return "code " + std::to_string(code);
}

}  // namespace dxshim::device_plugin
