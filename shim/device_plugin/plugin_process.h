// `dxshim serve` runs its device plugin as a child process (`dxshim device-plugin`), not as a
// second gRPC server inside the CRI proxy: a second server in one process shares gRPC's pollers
// with the relay and costs every relayed call (measured with bench/proxy_latency_bench: ~8 more
// context switches and +60 us p50 per call). As a child it adds nothing to the relay path, and a
// failure in it cannot take the node's CRI endpoint down.
//
// The child's log lines come through a pipe into serve's log (one log, one rotation), and serve
// tells it of every change of who holds GPUs through another (its stdin, Notify); it is
// restarted with a growing pause if it exits on its own, stopped with SIGTERM (SIGKILL after
// 5 s) when serve stops, and asks the kernel for SIGTERM if serve dies first. POSIX only: the
// Windows build does not serve the device plugin (README, "Windows nodes").
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dxshim::device_plugin {

class PluginProcess {
 public:
  // `args` follow the program name, e.g. {"device-plugin", "--device-plugin-dir", ...};
  // "--parent-pid <serve's pid>" is added.
  explicit PluginProcess(std::vector<std::string> args);
  ~PluginProcess();
  PluginProcess(const PluginProcess&) = delete;
  PluginProcess& operator=(const PluginProcess&) = delete;

  void Start();
  void Stop();
  // Tells the child at once that who holds GPUs changed (a commit, a stopped or removed pod), so
  // that it reads the runtime's record now rather than at its next resync: a byte on its stdin.
  // Never blocks; a no-op while no child runs.
  void Notify();

 private:
  void Supervise();
  pid_t Spawn(int& log_fd);
  void RelayLog(int fd);

  const std::vector<std::string> args_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  pid_t pid_ = -1;
  bool exited_ = true;
  int notify_fd_ = -1;  // the write end of the child's stdin
  std::thread supervisor_;
};

}  // namespace dxshim::device_plugin
