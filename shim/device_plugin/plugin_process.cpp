// The device plugin's child process under serve: started with this process's id, restarted when
// it ends, told of changes, stopped (over child_process.h, the platform's).
#include "shim/device_plugin/plugin_process.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::device_plugin {

PluginProcess::PluginProcess(std::vector<std::string> args) : args_(std::move(args)) {
  args_.insert(args_.end(), {"--parent-pid", std::to_string(socket_bridge::ThisProcess())});
}

PluginProcess::~PluginProcess() { Stop(); }

void PluginProcess::Start() {
  if (supervisor_.joinable()) return;
  supervisor_ = std::thread([this] { Supervise(); });
}

void PluginProcess::Stop() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  if (auto child = child_) {
    child->CloseInput();  // `dxshim device-plugin` stops at the end of its stdin
    if (!cv_.wait_for(lock, std::chrono::seconds(5), [this] { return child_ == nullptr; })) {
      spdlog::warn("device plugin: process {} did not stop within 5 s; killing it", child->id());
      child->Kill();
    }
  }
  cv_.notify_all();
  lock.unlock();
  if (supervisor_.joinable()) supervisor_.join();
}

void PluginProcess::Notify() {
  std::lock_guard lock(mutex_);
  if (child_) child_->Notify();
}

void PluginProcess::RelayLog(ChildProcess& child) {
  // The child writes "<level> <message>" lines (its pattern); they go on at that level.
  std::string buffer;
  char chunk[4096];
  for (long n; (n = child.ReadLog(chunk, sizeof chunk)) > 0;) {
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (auto end = buffer.find('\n'); end != std::string::npos; end = buffer.find('\n')) {
      auto line = buffer.substr(0, end);
      buffer.erase(0, end + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();  // Windows' line ends
      const auto space = line.find(' ');
      const auto level = spdlog::level::from_str(line.substr(0, space));
      const bool known = space != std::string::npos && level != spdlog::level::off;
      spdlog::log(known ? level : spdlog::level::info, "{}", known ? line.substr(space + 1) : line);
    }
  }
  if (!buffer.empty()) spdlog::info("{}", buffer);
}

void PluginProcess::Supervise() {
  auto pause = std::chrono::seconds(1);
  for (;;) {
    const auto started = std::chrono::steady_clock::now();
    std::shared_ptr<ChildProcess> child;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      try {
        child = std::make_shared<ChildProcess>(args_);
        child_ = child;
      } catch (const std::exception& e) {
        spdlog::error("device plugin: cannot start its process: {}", e.what());
      }
    }
    std::string how = "not started";
    if (child) {
      RelayLog(*child);  // until the child closes stderr, i.e. exits
      how = child->Wait();
    }
    std::unique_lock lock(mutex_);
    child_.reset();
    cv_.notify_all();
    if (stopping_) return;
    if (std::chrono::steady_clock::now() - started > std::chrono::minutes(1)) {
      pause = std::chrono::seconds(1);
    }
    spdlog::warn("device plugin: its process exited ({}); starting it again in {} s", how,
                 pause.count());
    cv_.wait_for(lock, pause, [this] { return stopping_; });
    pause = std::min(pause * 2, std::chrono::seconds(30));
  }
}

}  // namespace dxshim::device_plugin
