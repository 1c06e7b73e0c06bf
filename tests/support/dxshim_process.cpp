#include "tests/support/dxshim_process.h"

#include <signal.h>

#include <stdexcept>

#include "shim/proxy/unix_socket.h"

namespace dxshim::test {

DxshimProcess::DxshimProcess(const std::string& listen, const std::string& runtime,
                             const std::string& log_path, std::vector<std::string> extra)
    : socket_(listen) {
  std::vector<std::string> argv = {DXSHIM_BINARY, "serve",     "--listen",
                                   listen,        "--runtime", runtime};
  argv.insert(argv.end(), extra.begin(), extra.end());
  process_ = std::make_unique<Process>(argv, log_path);
  const bool up = WaitFor([&] { return !process_->running() || UnixSocketAnswers(listen); },
                          std::chrono::seconds(20));
  if (!up || !process_->running()) {
    throw std::runtime_error("dxshim did not start; its log:\n" + process_->Log());
  }
}

std::optional<int> DxshimProcess::Stop(std::chrono::milliseconds timeout) {
  process_->Signal(SIGTERM);
  return process_->Wait(timeout);
}

int RunDxshim(const std::vector<std::string>& args, const std::string& log_path,
              std::string* output) {
  std::vector<std::string> argv = {DXSHIM_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, log_path);
  const auto code = p.Wait(std::chrono::seconds(30));
  if (output) *output = p.Log();
  return code.value_or(-1);
}

}  // namespace dxshim::test
