#include "devices/windows/child_run.h"

#include <windows.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>
#include <system_error>
#include <thread>

#include "devices/windows/wide_text.h"

namespace dxshim::devices::windows {
namespace {

// How long a killed child (and the end of its output) is waited for: a process stuck in a kernel
// driver call cannot die until the call returns, and discovery must not wait on it.
constexpr DWORD kAfterKillMs = 5000;

using Owned = OwnedHandle;

std::string Failed(const char* what) {
  return std::string(what) + " failed (error " + std::to_string(GetLastError()) + ")";
}

// What the reader thread fills. Shared with it, so that a reader whose pipe never ends (a process
// outside the job holding its write end) can be left behind without a dangling reference.
struct Output {
  Owned read_end;
  Owned done{CreateEventW(nullptr, TRUE, FALSE, nullptr)};
  std::string text;
  bool cut = false;
};

// The child, started suspended and put in `job` before it runs a single instruction. It inherits
// the two handles listed and nothing else: without the list it is not started at all.
bool Start(const std::wstring& program, const std::vector<std::string>& args, HANDLE job,
           HANDLE out, HANDLE nul, Owned& process, std::string& failure) {
  std::wstring line;
  AppendArgument(line, program);
  for (const auto& arg : args) AppendArgument(line, Widen(arg));
  HANDLE inherited[] = {out, nul};
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
  std::vector<char> attributes(size);
  auto* list = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attributes.data());
  if (!InitializeProcThreadAttributeList(list, 1, 0, &size)) {
    failure = Failed("InitializeProcThreadAttributeList");
    return false;
  }
  if (!UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited,
                                 sizeof inherited, nullptr, nullptr)) {
    failure = Failed("UpdateProcThreadAttribute(PROC_THREAD_ATTRIBUTE_HANDLE_LIST)");
    DeleteProcThreadAttributeList(list);
    return false;
  }
  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = nul;
  startup.StartupInfo.hStdOutput = out;
  startup.StartupInfo.hStdError = nul;
  startup.lpAttributeList = list;
  PROCESS_INFORMATION info{};
  const BOOL created =
      CreateProcessW(program.c_str(), line.data(), nullptr, nullptr, TRUE,
                     CREATE_SUSPENDED | CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT, nullptr,
                     nullptr, &startup.StartupInfo, &info);
  DeleteProcThreadAttributeList(list);
  if (!created) {
    failure = Failed("CreateProcess");
    return false;
  }
  process.h = info.hProcess;
  Owned thread(info.hThread);
  if (!AssignProcessToJobObject(job, info.hProcess)) {
    failure = Failed("AssignProcessToJobObject");
    TerminateProcess(info.hProcess, 1);
    WaitForSingleObject(info.hProcess, kAfterKillMs);
    return false;
  }
  ResumeThread(info.hThread);
  return true;
}

std::string Seconds(std::chrono::milliseconds time) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(time.count()) / 1000.0);
  return text;
}

}  // namespace

ChildRun RunChild(const std::wstring& program, const std::vector<std::string>& args,
                  std::chrono::milliseconds deadline, std::size_t out_limit) {
  ChildRun run;
  if (program.empty()) {
    run.failure = "could not be started: this program's path is unknown (GetModuleFileName)";
    return run;
  }
  Owned job(CreateJobObjectW(nullptr, nullptr));
  if (!job.h) {
    run.failure = Failed("CreateJobObject");
    return run;
  }
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!SetInformationJobObject(job.h, JobObjectExtendedLimitInformation, &limits, sizeof limits)) {
    run.failure = Failed("SetInformationJobObject");
    return run;
  }
  auto output = std::make_shared<Output>();
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  Owned write_end;
  if (!output->done.h || !CreatePipe(&output->read_end.h, &write_end.h, &inherit, 0)) {
    run.failure = Failed("CreatePipe");
    return run;
  }
  SetHandleInformation(output->read_end.h, HANDLE_FLAG_INHERIT, 0);
  Owned nul(CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                        &inherit, OPEN_EXISTING, 0, nullptr));
  if (nul.h == INVALID_HANDLE_VALUE) {
    run.failure = Failed("opening NUL");
    return run;
  }
  Owned process;
  if (!Start(program, args, job.h, write_end.h, nul.h, process, run.failure)) {
    run.failure = "could not be started: " + run.failure;
    return run;
  }
  write_end.Close();  // the child's copy is the only writer: its exit ends the reads
  try {
    std::thread([output, out_limit] {
      char buffer[4096];
      DWORD got = 0;
      while (ReadFile(output->read_end.h, buffer, sizeof buffer, &got, nullptr) && got > 0) {
        const auto room = out_limit - output->text.size();
        output->text.append(buffer, std::min<std::size_t>(got, room));
        if (got > room) output->cut = true;
      }
      SetEvent(output->done.h);
    }).detach();
  } catch (const std::system_error& e) {
    TerminateJobObject(job.h, 1);
    run.failure = std::string("was killed: no thread to read its output (") + e.what() + ")";
    return run;
  }
  const auto wait_ms = static_cast<DWORD>(
      std::clamp<long long>(deadline.count(), 0, static_cast<long long>(INFINITE) - 1));
  const auto waited = WaitForSingleObject(process.h, wait_ms);
  if (waited == WAIT_OBJECT_0) {
    GetExitCodeProcess(process.h, &run.exit_code);
    run.finished = true;
  } else if (waited == WAIT_TIMEOUT) {
    run.failure = "did not answer within " + Seconds(deadline) + " s and was killed";
  } else {
    run.failure = Failed("waiting for it");
  }
  // Whatever it started ends with the job, so that the pipe's last writer goes.
  TerminateJobObject(job.h, 1);
  if (!run.finished && WaitForSingleObject(process.h, kAfterKillMs) != WAIT_OBJECT_0) {
    run.failure += ", and had not ended " + Seconds(std::chrono::milliseconds(kAfterKillMs)) +
                   " s later (stuck in a driver call?)";
  }
  if (WaitForSingleObject(output->done.h, kAfterKillMs) != WAIT_OBJECT_0) {
    // A child that has not ended, or a process outside the job holding the pipe: its reader is
    // left behind with its own state.
    if (run.finished) {
      run.finished = false;
      run.failure = "ended, but its output pipe did not (another process holds it)";
    }
    return run;
  }
  run.out = std::move(output->text);
  run.out_cut = output->cut;
  return run;
}

void OwnedHandle::Close() {
  if (h && h != INVALID_HANDLE_VALUE) CloseHandle(h);
  h = nullptr;
}

std::string DescribeExit(unsigned long exit_code) {
  if (exit_code >= 0xC0000000ul) {
    char text[48];
    std::snprintf(text, sizeof text, "ended with exception 0x%08lX", exit_code);
    return text;
  }
  if (exit_code >= 0x80000000ul) {
    char text[48];
    std::snprintf(text, sizeof text, "exited with status 0x%08lX", exit_code);
    return text;
  }
  return "exited with code " + std::to_string(exit_code);
}

std::wstring ThisProgramPath() {
  // Long paths (\\?\ and LongPathsEnabled) reach 32767 characters: the buffer grows to that.
  for (DWORD size = MAX_PATH; size <= 32768; size *= 2) {
    std::wstring self(size, L'\0');
    const DWORD length = GetModuleFileNameW(nullptr, self.data(), size);
    if (length == 0) return L"";
    if (length < size) return self.substr(0, length);
  }
  return L"";
}

void AppendArgument(std::wstring& line, const std::wstring& arg) {
  if (!line.empty()) line += L' ';
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
    line += arg;
    return;
  }
  line += L'"';
  std::size_t backslashes = 0;
  for (const wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    line.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
    backslashes = 0;
    line += c;
  }
  line.append(backslashes * 2, L'\\');
  line += L'"';
}

}  // namespace dxshim::devices::windows
