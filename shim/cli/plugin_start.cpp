#include "shim/cli/plugin_start.h"

#include <spdlog/spdlog.h>

namespace dxshim {

PluginStart::PluginStart(device_plugin::PluginProcess* plugin, CriCallers& callers,
                         bool after_kubelet)
    : plugin_(plugin), callers_(callers), after_kubelet_(plugin != nullptr && after_kubelet) {
  if (!after_kubelet_) return;
  // On the relay's thread: a short lock, no wait.
  callers_.OnFirstCallOf(kKubeletProgram, [this](const CriClient& client) {
    {
      std::lock_guard lock(mutex_);
      called_ = true;
      kubelet_pid_ = client.pid;
    }
    cv_.notify_all();
  });
}

PluginStart::~PluginStart() { Stop(); }

void PluginStart::Begin() {
  if (plugin_ == nullptr) return;
  if (!after_kubelet_) {
    plugin_->Start();
    return;
  }
  spdlog::info(
      "device plugin: starts at the first CRI call {} makes through dxshim "
      "(device-plugin-after-kubelet)",
      kKubeletProgram);
  waiter_ = std::thread([this] { WaitThenStart(); });
}

void PluginStart::WaitThenStart() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return called_ || stopping_; });
  if (stopping_) return;
  const auto pid = kubelet_pid_;
  lock.unlock();
  spdlog::info("device plugin: {} (pid {}) called through dxshim; starting", kKubeletProgram, pid);
  plugin_->Start();
}

void PluginStart::Stop() {
  if (plugin_ == nullptr) return;
  if (after_kubelet_) callers_.OnFirstCallOf("", nullptr);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (waiter_.joinable()) waiter_.join();
  plugin_->Stop();
  plugin_ = nullptr;
}

}  // namespace dxshim
