// `dxshim serve` runs its device plugin as a child process (`dxshim device-plugin`), not as a
// second gRPC server inside the CRI proxy: a second server in one process shares gRPC's pollers
// with the relay and costs every relayed call (measured with bench/proxy_latency_bench: ~8 more
// context switches and +60 us p50 per call). As a child it adds nothing to the relay path, and a
// failure in it cannot take the node's CRI endpoint down.
//
// The child's log lines come through a pipe into serve's log (one log, one rotation), and serve
// tells it of every change of who holds GPUs through another (its stdin, Notify); it is
// restarted with a growing pause if it exits on its own. Serve stops it by closing its stdin
// (killing it after 5 s), and it never outlives serve (child_process.h: the kernel's parent-death
// signal on Linux, a kill-on-close job object on Windows).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shim/device_plugin/child_process.h"

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
  void RelayLog(ChildProcess& child);

  std::vector<std::string> args_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::shared_ptr<ChildProcess> child_;  // while one runs
  std::thread supervisor_;
};

}  // namespace dxshim::device_plugin
