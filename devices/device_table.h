// The readable listing `dxshim devices` prints by default, one adapter per row.
#pragma once

#include <string>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices {

std::string FormatDeviceTable(const std::vector<Device>& devices);

// Integrated and detachable adapters are skipped unless the operator opts in: sharing a laptop's
// iGPU or an eGPU with containers is rarely what a node wants.
std::vector<Device> SelectUsable(const std::vector<Device>& devices, bool include_integrated,
                                 bool include_detachable);

}  // namespace dxshim::devices
