// A child process started by a test, with its output captured in a log file.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::test {

class Process {
 public:
  // Starts `argv[0]` (looked up in PATH) with stdout and stderr appended to `log_path`.
  Process(std::vector<std::string> argv, std::string log_path);
  ~Process();  // SIGKILL if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void Signal(int sig);
  // Waits for the process to exit; returns its exit code (128+N when killed by signal N), or
  // nullopt if it is still running after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string log_path_;
};

// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
template <typename Condition>
bool WaitFor(Condition&& condition, std::chrono::milliseconds timeout);

}  // namespace dxshim::test

#include <thread>

template <typename Condition>
bool dxshim::test::WaitFor(Condition&& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}
