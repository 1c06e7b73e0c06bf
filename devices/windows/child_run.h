// Windows only: a short-lived child process whose answer is its standard output, with a deadline.
// The child runs in a job object of its own that kills it, and whatever it started, when the
// deadline passes or when this process ends (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE); it inherits
// only its own pipe and NUL, whatever else is inheritable here (a service's sockets and pipes).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace dxshim::devices::windows {

// A handle closed when this goes (INVALID_HANDLE_VALUE and null are left alone).
struct OwnedHandle {
  void* h = nullptr;  // HANDLE
  OwnedHandle() = default;
  explicit OwnedHandle(void* handle) : h(handle) {}
  ~OwnedHandle() { Close(); }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  void Close();
};

struct ChildRun {
  bool finished = false;  // it exited within the deadline; `exit_code` says how
  unsigned long exit_code = 0;
  std::string out;       // its standard output, at most the limit asked for
  bool out_cut = false;  // it wrote more than that
  std::string failure;   // why it did not finish: not started, or killed at the deadline
};

// Runs `program args...` and waits at most `deadline` for it to exit.
ChildRun RunChild(const std::wstring& program, const std::vector<std::string>& args,
                  std::chrono::milliseconds deadline, std::size_t out_limit);

// "exited with code 3", "ended with exception 0xC0000005" (Windows' NTSTATUS codes).
std::string DescribeExit(unsigned long exit_code);

// This program's own path (GetModuleFileNameW).
std::wstring ThisProgramPath();

// One argument appended to a command line the way the C runtime's parser reads it back: quoted
// when it has a space, tab or quote; backslashes doubled only where they precede a quote.
void AppendArgument(std::wstring& line, const std::wstring& arg);

}  // namespace dxshim::devices::windows
