// Whether the runtime files dxshim is about to mount are on the host now: checked at every
// CreateContainer (a stat per file, see bench/README.md), because a missing mount source is
// not refused by containerd on Windows but created as an empty directory, here inside the host's
// DriverStore, and mapped over the DLL. A file that is missing is told apart by what was seen
// before: never seen (the driver lists a file it does not ship: skipped, as always) or seen and
// now gone (a driver update moved the DriverStore folder under the device snapshot: the caller
// re-reads the devices and decides again, and never mounts half a driver).
#pragma once

#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "devices/device.h"
#include "shim/gpu/injection.h"

namespace dxshim {

class HostFiles {
 public:
  explicit HostFiles(config::Target target) { target_.target = target; }
  // Remembers which runtime files of `devices` exist now. The device snapshot calls it each time
  // it reads its source, before the devices are handed out (off the relay path).
  void Observe(const std::vector<devices::Device>& devices);
  // What is at `path` now (a regular file, or a link to one, is present).
  HostFileState Check(const std::string& path);

 private:
  TargetOptions target_;
  std::mutex mutex_;
  std::unordered_set<std::string> seen_;  // paths that were present at some time
};

}  // namespace dxshim
