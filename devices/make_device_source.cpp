// The device sources a spec names: inventory files here, and this platform's discovery by
// make_device_source_windows.cpp or make_device_source_posix.cpp (platform_device_source.h).
#include "devices/make_device_source.h"

#include <filesystem>
#include <stdexcept>

#include "devices/inventory_file.h"
#include "devices/linux_discovery.h"
#include "devices/platform_device_source.h"

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

std::unique_ptr<DeviceSource> MakeLinuxSource(const std::string& sysfs_root) {
  return std::make_unique<LinuxSource>(sysfs_root);
}

std::unique_ptr<DeviceSource> MakeDeviceSource(const std::string& spec,
                                               const std::string& sysfs_root) {
  constexpr std::string_view kInventory = "inventory:";
  if (spec.starts_with(kInventory) && spec.size() > kInventory.size()) {
    return std::make_unique<InventoryFileSource>(spec.substr(kInventory.size()));
  }
  if (auto source = MakePlatformDeviceSource(spec, sysfs_root)) return source;
  throw std::invalid_argument("device source '" + spec +
                              "' is not auto, linux, windows or inventory:PATH");
}

}  // namespace dxshim::devices
