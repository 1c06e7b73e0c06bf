// Runtime files the operator adds per vendor (e.g. nvidia-smi.exe for NVIDIA), on top of what the
// driver registers. They come from dxshim's configuration, never from a pod.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices {

struct VendorRuntimeFiles {
  std::string vendor;                 // matched against Device::vendor, case-insensitively; or
  std::uint16_t vendor_id = 0;        // the PCI vendor id (0: match by name)
  std::vector<RuntimeFile> system32;  // sources relative to the device's DriverStore folder
  std::vector<RuntimeFile> syswow64;
  bool operator==(const VendorRuntimeFiles&) const = default;
};

bool Matches(const VendorRuntimeFiles& extra, const Device& device);

// Appends each matching entry's files after the device's own lists (MergeRuntimeFiles: a
// destination the driver already provides keeps the driver's file). Devices without a DriverStore
// folder get none, having nowhere to take them from.
void AddVendorRuntimeFiles(std::vector<Device>& devices,
                           const std::vector<VendorRuntimeFiles>& extras);

}  // namespace dxshim::devices
