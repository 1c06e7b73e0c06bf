// Windows only: the PnP devices that are GPUs, found through the GPU LUID property the graphics
// kernel sets on each adapter's device node, read with CfgMgr32 (no WMI, no SetupAPI).
#pragma once

#include <cstdint>
#include <map>

#include "devices/windows_adapter.h"

namespace dxshim::devices::windows {

// Present device nodes that carry the GPU LUID property ({60B193CB-5276-4D0F-96FC-F173ABAD3EC6},
// 2), keyed by that LUID, with their instance id, location paths, driver key, description,
// manufacturer and PCI address (bus number, address, location info). Throws std::runtime_error when
// the device list cannot be read.
std::map<std::uint64_t, PnpFacts> PnpDevicesByLuid();

}  // namespace dxshim::devices::windows
