// When serve starts its device plugin (and so when kubelet advertises dxshim's GPUs to the
// scheduler): at once, or, with device-plugin-after-kubelet where dxshim knows the clients of its
// pipe (Windows), at the first CRI call made through dxshim by a program named kubelet.exe. Until
// then no pod can be scheduled for dxshim's GPUs on a node whose kubelet does not yet go through
// dxshim (an install in progress, a takeover rolled back, a bootstrap that has not pointed
// kubelet at dxshim): that call is also what `dxshim install` proves before it reports success.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "shim/device_plugin/plugin_process.h"
#include "shim/proxy/cri_callers.h"

namespace dxshim {

inline constexpr char kKubeletProgram[] = "kubelet.exe";

class PluginStart {
 public:
  // Before dxshim's endpoint listens, so that kubelet's first call is not missed. `plugin` may
  // be null (no device plugin).
  PluginStart(device_plugin::PluginProcess* plugin, CriCallers& callers, bool after_kubelet);
  ~PluginStart();  // Stop()
  PluginStart(const PluginStart&) = delete;
  PluginStart& operator=(const PluginStart&) = delete;

  // Once the endpoint serves: starts the plugin, or the wait for kubelet's call.
  void Begin();
  // Stops the wait and the plugin.
  void Stop();

 private:
  void WaitThenStart();

  device_plugin::PluginProcess* plugin_;
  CriCallers& callers_;
  const bool after_kubelet_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool called_ = false;
  bool stopping_ = false;
  std::uint32_t kubelet_pid_ = 0;
  std::thread waiter_;
};

}  // namespace dxshim
