#include "devices/device_source.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "devices/device_table.h"

namespace dxshim::devices {
DeviceSnapshot::DeviceSnapshot(std::unique_ptr<DeviceSource> source, SnapshotOptions options)
    : source_(std::move(source)), options_(std::move(options)) {
  source_->Changed();
  auto inventory = std::make_shared<Inventory>();
  inventory->generation = 1;
  try {
    inventory->devices = Prepare(source_->Load());
    ++loads_;
    for (const auto& warning : source_->Warnings()) spdlog::warn("devices: {}", warning);
    for (const auto& line : source_->DebugLines()) spdlog::debug("devices: {}", line);
  } catch (const std::exception& e) {
    if (!options_.tolerate_initial_failure) throw;
    ++failures_;
    spdlog::error("devices: {} could not be read, starting with no device: {}", source_->Name(),
                  e.what());
  }
  current_ = std::move(inventory);
}

DeviceSnapshot::~DeviceSnapshot() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  changed_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<Device> DeviceSnapshot::Prepare(const std::vector<Device>& devices) const {
  auto usable = SelectUsable(devices, options_.include_integrated, options_.include_detachable);
  AddVendorRuntimeFiles(usable, options_.extra_runtime_files);
  if (options_.loaded) options_.loaded(usable);
  return usable;
}

std::shared_ptr<const Inventory> DeviceSnapshot::Current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

bool DeviceSnapshot::Refresh() { return Read(false); }

bool DeviceSnapshot::Reload() { return Read(true); }

bool DeviceSnapshot::Read(bool force) {
  std::lock_guard refresh_lock(refresh_mutex_);
  std::vector<Device> devices;
  try {
    if (!source_->Changed() && !force) return false;
    devices = Prepare(source_->Load());
    ++loads_;
  } catch (const std::exception& e) {
    ++failures_;
    spdlog::error("devices: {} could not be read, keeping the previous {} device(s): {}",
                  source_->Name(), Current()->devices.size(), e.what());
    return false;
  }
  for (const auto& warning : source_->Warnings()) spdlog::warn("devices: {}", warning);
  for (const auto& line : source_->DebugLines()) spdlog::debug("devices: {}", line);
  const auto previous = Current();
  if (devices == previous->devices) return false;
  auto next = std::make_shared<Inventory>();
  next->devices = std::move(devices);
  next->generation = previous->generation + 1;
  spdlog::info("devices: {} changed: {} -> {} device(s)", source_->Name(), previous->devices.size(),
               next->devices.size());
  {
    std::lock_guard lock(mutex_);
    generation_.store(next->generation, std::memory_order_release);
    current_ = std::move(next);
  }
  changed_cv_.notify_all();
  return true;
}

std::uint64_t DeviceSnapshot::WaitForChange(std::uint64_t seen,
                                            std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_cv_.wait_for(lock, timeout, [&] { return current_->generation != seen || stopping_; });
  return current_->generation;
}

SnapshotStats DeviceSnapshot::stats() const {
  SnapshotStats s;
  s.loads = loads_.load();
  s.failures = failures_.load();
  s.loaded = s.loads > 0;
  return s;
}

void DeviceSnapshot::StartBackgroundRefresh() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stop_cv_.wait_for(lock, options_.refresh_interval, [this] { return stopping_; })) {
      lock.unlock();
      Refresh();
      lock.lock();
    }
  });
}

SnapshotFollower::SnapshotFollower(const DeviceSnapshot& snapshot, std::uint64_t seen,
                                   std::function<void(const Inventory& inventory)> changed) {
  thread_ = std::thread([this, &snapshot, seen, changed = std::move(changed)] {
    auto generation = seen;
    while (!stopping_) {
      // Bounded, so that a stop is seen within this time.
      const auto now = snapshot.WaitForChange(generation, std::chrono::milliseconds(250));
      if (stopping_ || now == generation) continue;
      generation = now;
      changed(*snapshot.Current());
    }
  });
}

SnapshotFollower::~SnapshotFollower() {
  stopping_ = true;
  thread_.join();
}

}  // namespace dxshim::devices
