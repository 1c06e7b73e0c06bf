// Whether runtime files exist on the host, remembered per device snapshot: the CreateContainer
// path asks without touching the disk after the first time, and a new snapshot (a driver update
// changes the DriverStore folder) starts afresh.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "devices/device_source.h"

namespace dxshim {

class HostFileCache {
 public:
  explicit HostFileCache(const devices::DeviceSnapshot& snapshot) : snapshot_(snapshot) {}
  // A regular file (or a link to one) at `path`.
  bool Exists(const std::string& path);

 private:
  const devices::DeviceSnapshot& snapshot_;
  std::mutex mutex_;
  std::uint64_t generation_ = 0;
  std::unordered_map<std::string, bool> known_;
};

}  // namespace dxshim
