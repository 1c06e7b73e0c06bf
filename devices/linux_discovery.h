// Linux discovery: one Device per DRM render node (/sys/class/drm/renderD*), for Linux nodes and
// for end-to-end tests on this machine. The sysfs root is a parameter so tests can build a fake
// tree.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices {

class DiscoveryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Devices sorted by PCI address. id: PCI address ("0000:01:00.0"); location path: the render
// node ("/dev/dri/renderD128"); vendor/device/subsystem/revision from the PCI device; driver
// version from the driver module when it says; dedicated memory where the driver reports it
// (amdgpu's mem_info_vram_total), else 0. An adapter on PCI bus 0 (part of the root complex, like
// an Intel iGPU) counts as integrated. Throws DiscoveryError naming the file it could not read.
std::vector<Device> DiscoverLinux(const std::string& sysfs_root = "/sys",
                                  const std::string& dev_root = "/dev");

}  // namespace dxshim::devices
