#include "devices/device_source.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

#include "devices/device_table.h"
#include "devices/inventory_file.h"
#include "devices/linux_discovery.h"
#ifdef _WIN32
#include "devices/windows/windows_device_source.h"
#endif

namespace dxshim::devices {
namespace {

class InventoryFileSource : public DeviceSource {
 public:
  explicit InventoryFileSource(std::string path) : path_(std::move(path)) {}
  std::string Name() const override { return "inventory " + path_; }
  bool Changed() override {
    std::error_code ec;
    const auto time = std::filesystem::last_write_time(path_, ec);
    const auto size = ec ? 0 : std::filesystem::file_size(path_, ec);
    if (ec) return true;  // Load() will say what is wrong
    const bool changed = !seen_ || time != time_ || size != size_;
    return changed;
  }
  std::vector<Device> Load() override {
    std::error_code ec;
    time_ = std::filesystem::last_write_time(path_, ec);
    size_ = ec ? 0 : std::filesystem::file_size(path_, ec);
    seen_ = !ec;
    return LoadInventoryFile(path_);
  }

 private:
  std::string path_;
  bool seen_ = false;
  std::filesystem::file_time_type time_{};
  std::uintmax_t size_ = 0;
};

class LinuxSource : public DeviceSource {
 public:
  explicit LinuxSource(std::string sysfs_root) : sysfs_root_(std::move(sysfs_root)) {}
  std::string Name() const override { return "linux discovery (" + sysfs_root_ + ")"; }
  bool Changed() override { return true; }  // a few sysfs reads: cheaper than tracking them
  std::vector<Device> Load() override { return DiscoverLinux(sysfs_root_); }

 private:
  std::string sysfs_root_;
};

}  // namespace

std::unique_ptr<DeviceSource> MakeDeviceSource(const std::string& spec,
                                               const std::string& sysfs_root) {
  constexpr std::string_view kInventory = "inventory:";
  if (spec.starts_with(kInventory) && spec.size() > kInventory.size()) {
    return std::make_unique<InventoryFileSource>(spec.substr(kInventory.size()));
  }
#ifdef _WIN32
  if (spec == "auto" || spec == "windows") return std::make_unique<windows::WindowsDeviceSource>();
  if (spec == "linux") return std::make_unique<LinuxSource>(sysfs_root);
#else
  if (spec == "auto" || spec == "linux") return std::make_unique<LinuxSource>(sysfs_root);
  if (spec == "windows") {
    throw std::invalid_argument(
        "device source 'windows': Windows discovery is part of the Windows build of dxshim "
        "(on this platform use linux or inventory:PATH)");
  }
#endif
  throw std::invalid_argument("device source '" + spec +
                              "' is not auto, linux, windows or inventory:PATH");
}

DeviceSnapshot::DeviceSnapshot(std::unique_ptr<DeviceSource> source, SnapshotOptions options)
    : source_(std::move(source)), options_(std::move(options)) {
  source_->Changed();
  auto inventory = std::make_shared<Inventory>();
  inventory->generation = 1;
  try {
    inventory->devices = Prepare(source_->Load());
    ++loads_;
    for (const auto& warning : source_->Warnings()) spdlog::warn("devices: {}", warning);
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
  return usable;
}

std::shared_ptr<const Inventory> DeviceSnapshot::Current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

bool DeviceSnapshot::Refresh() {
  std::lock_guard refresh_lock(refresh_mutex_);
  std::vector<Device> devices;
  try {
    if (!source_->Changed()) return false;
    devices = Prepare(source_->Load());
    ++loads_;
  } catch (const std::exception& e) {
    ++failures_;
    spdlog::error("devices: {} could not be read, keeping the previous {} device(s): {}",
                  source_->Name(), Current()->devices.size(), e.what());
    return false;
  }
  for (const auto& warning : source_->Warnings()) spdlog::warn("devices: {}", warning);
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
