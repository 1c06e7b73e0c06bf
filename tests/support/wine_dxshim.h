// The real Windows dxshim.exe (scripts/build-windows.sh), run under wine by a Linux test or
// benchmark, with the named pipe in front of it the way kubelet reaches it on a Windows node:
//   CRI client (Linux) --TCP--> pipe-relay.exe (forwarder only) --\\.\pipe\NAME--> dxshim.exe
//   --runtime leg (tcp:// here)--> containerd
// Both Windows programs share one private wine prefix (one wineserver: one pipe namespace).
// Wine is not Windows: it has no GPU and its sockets are the host's; see docs/windows.md.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {

// The wine launcher (wine64 on PATH, else Debian's /usr/lib/wine/wine64).
std::string WineBinary();
// A host path as wine's Windows programs name it (its Z: drive is the host's root).
std::string WindowsPath(const std::string& host_path);

class WineDxshim {
 public:
  // Starts `dxshim.exe serve --listen npipe://./pipe/PIPE --runtime RUNTIME FLAGS... --log-file
  // <dir>/dxshim.log` and the forwarder; waits until the pipe answers. Throws with the logs.
  // PIPE is `pipe`, or dxshim-<pid> when empty.
  WineDxshim(const std::string& exe, const std::string& relay_exe, const std::string& runtime,
             const std::vector<std::string>& flags, const std::string& pipe = "");
  ~WineDxshim();  // stops whatever still runs and ends the prefix's wineserver
  WineDxshim(const WineDxshim&) = delete;
  WineDxshim& operator=(const WineDxshim&) = delete;

  // The gRPC target a Linux client dials: the forwarder to the pipe.
  std::string pipe_target() const { return "127.0.0.1:" + std::to_string(forwarder_port_); }
  // The TCP ports the programs of this prefix listen on (wine 8 keeps their sockets in the
  // prefix's wineserver), but the relay's forwarder: dxshim.exe's and its children's.
  std::vector<std::uint16_t> ListeningPorts() const;
  std::string Log() const;  // dxshim.exe's log file and console output
  bool running() { return dxshim_->running(); }
  // dxshim.exe's resident set (VmRSS of its process), in KiB; 0 when it cannot be read.
  long RssKiB() const;
  // The pipe's name (\\.\pipe\NAME): its endpoint is npipe://./pipe/NAME.
  const std::string& pipe() const { return pipe_; }
  // Runs a Windows program (`command`: its path and arguments) in this prefix to its end, its
  // standard output into `out` and its standard error into `err` (either may be null; `name`
  // names the files kept in the test's folder); returns its exit code, -1 when it did not end
  // within two minutes.
  int Run(const std::vector<std::string>& command, const std::string& name, std::string* out,
          std::string* err = nullptr);
  // SIGKILL, as a crash or a killed service would end it.
  void Kill();
  // Ctrl-C (wine turns SIGINT into CTRL_C_EVENT) and the exit code, nullopt if it did not exit.
  std::optional<int> Stop(std::chrono::milliseconds timeout = std::chrono::seconds(60));

 private:
  // argv running `program ARGS...` in this prefix.
  std::vector<std::string> InPrefix(const std::string& program,
                                    const std::vector<std::string>& args) const;

  TempDir dir_;
  std::string pipe_;
  std::unique_ptr<Process> dxshim_;
  std::unique_ptr<Process> relay_;
  int forwarder_port_ = 0;
};

}  // namespace dxshim::test
