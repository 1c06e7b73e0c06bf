// What a pod asks for, read from its annotations (PodSandboxConfig.annotations, which kubelet
// copies from the pod). Every key lives under the dxshim.io/ prefix:
//
//   dxshim.io/gpu: "2"                  how many GPUs (1-16); default 1, or the number of pins
//   dxshim.io/class: display|compute    full D3D12/WDDM display adapter, or compute-only (MCDM)
//   dxshim.io/vendor: nvidia            vendor name (nvidia, amd, intel, ...) or PCI id 0x10de
//   dxshim.io/min-memory: 8Gi           minimum dedicated memory per GPU
//   dxshim.io/requires: cuda,nvml.dll   runtime files (System32 names) or APIs the GPU must bring
//   dxshim.io/device: <pin>[,<pin>...]  only these devices: id, LUID (0x00000000_0x0000D1A2; the
//                                       old 0x00000000:0x0000d1a2 is read too) or location path
//   dxshim.io/sharing: exclusive|shared exclusive: nobody else on the device; default shared
//   dxshim.io/containers: app,init      only these containers (init containers too); default all
//   dxshim.io/gpu-memory: 6Gi           GPU memory reserved on each GPU (gpu_memory.h); default
//                                       the serve key default-gpu-memory, the whole GPU when
//                                       exclusive
//
// Unknown dxshim.io/ keys and malformed values are errors naming the annotation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices {

class RequestError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct DeviceRequest {
  unsigned count = 1;
  std::optional<DeviceClass> device_class;
  std::string vendor;           // lower case vendor name, or
  std::uint16_t vendor_id = 0;  // a PCI vendor id
  std::uint64_t min_memory = 0;
  std::vector<std::string> required_files;  // System32 destination names, e.g. nvcuda.dll
  std::vector<std::string> pins;            // device id, LUID (as FormatLuid) or location path
  bool exclusive = false;
  std::vector<std::string> containers;  // empty: every container of the pod
  std::uint64_t gpu_memory = 0;         // bytes reserved on each GPU; 0: the policy's default

  bool operator==(const DeviceRequest&) const = default;
};

// The number of slots in a keys::kPluginSlotsAnnotation value (shim/base/dxshim_keys.h). Throws
// RequestError naming the annotation when the list is empty, has an empty or repeated entry, or
// asks for more GPUs than a request may.
unsigned CountPluginSlots(const std::string& value);
// The same for a keys::kPluginMemoryUnitsAnnotation value (memory units; up to 2^20 of them).
unsigned CountPluginMemoryUnits(const std::string& value);

// nullopt when no annotation starts with dxshim.io/. Throws RequestError otherwise-invalid.
std::optional<DeviceRequest> ParseDeviceRequest(
    const std::map<std::string, std::string>& annotations);

// Whether the container named `container` is in the request's scope.
bool AppliesTo(const DeviceRequest& request, const std::string& container);

// "count=1 vendor=nvidia class=display min-memory=8Gi requires=nvcuda.dll shared": for messages.
std::string Describe(const DeviceRequest& request);

// Whether `pin` names `device`: its id, its LUID (any spelling ParseLuid reads:
// 0x00000000_0x0000D1A2, dxshim's earlier 0x00000000:0x0000d1a2, or one number 0xd1a2) or its
// location path, compared case-insensitively.
bool PinMatches(const std::string& pin, const Device& device);

}  // namespace dxshim::devices
