// The real dxshim binary, started as a child process by a test.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace dxshim::test {

class DxshimProcess {
 public:
  // Runs `dxshim serve --listen LISTEN --runtime RUNTIME EXTRA...` and waits until it answers on
  // LISTEN (throws with its log if it exits or does not answer within 20 s).
  DxshimProcess(const std::string& listen, const std::string& runtime, const std::string& log_path,
                std::vector<std::string> extra = {});
  const std::string& socket() const { return socket_; }
  Process& process() { return *process_; }
  // SIGTERM, then the exit code (nullopt if it did not exit within `timeout`).
  std::optional<int> Stop(std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  std::string socket_;
  std::unique_ptr<Process> process_;
};

// Runs `dxshim ARGS...` to completion; returns the exit code and fills `output`.
int RunDxshim(const std::vector<std::string>& args, const std::string& log_path,
              std::string* output);

}  // namespace dxshim::test
