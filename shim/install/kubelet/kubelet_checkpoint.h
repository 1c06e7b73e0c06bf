// kubelet's device manager checkpoint, `kubelet_internal_checkpoint` in its device plugin folder
// (kubernetes pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go): JSON of
//   {"Data": {"PodDeviceEntries": [{"PodUID", "ContainerName", "ResourceName",
//             "DeviceIDs": {"<NUMA node>": [ids]}, "AllocResp": base64}, ...],
//             "RegisteredDevices": {"<resource>": [ids], ...}},
//    "Checksum": N}
// kubelet writes it after every device list a plugin sends and every allocation
// (manager.go writeCheckpoint), RegisteredDevices holding each registered resource's *healthy*
// devices at that moment. Only the resources and their devices are read here; the checksum (an
// FNV hash of Go's %#v printing of Data) is kubelet's to verify. Read by `dxshim doctor` (its
// device plugin lines), by `dxshim install` (another GPU device plugin: other_gpu_plugins.h) and
// by the device plugin (which memory units kubelet allocated to which pod:
// shim/device_plugin/plugin_memory_units.h), hence here, below all three.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace dxshim::install {

inline constexpr char kKubeletCheckpoint[] = "kubelet_internal_checkpoint";

// RegisteredDevices by resource name. Throws std::runtime_error naming what is wrong when the
// text is not such a checkpoint.
std::map<std::string, std::vector<std::string>> RegisteredDevices(const std::string& json);

// One PodDeviceEntries item: the devices of one resource kubelet allocated to one container.
// kubelet writes DeviceIDs as {"<NUMA node>": [ids]} since v1.20 and as a plain list before
// (checkpoint.go PodDevicesEntry, DevicesPerNUMA); both are read, the NUMA nodes merged.
struct PodDeviceEntry {
  std::string pod_uid;
  std::string container;
  std::string resource;
  std::vector<std::string> device_ids;
};

// Every PodDeviceEntries item. Throws std::runtime_error naming what is wrong when the text is
// not such a checkpoint.
std::vector<PodDeviceEntry> PodDeviceEntries(const std::string& json);

}  // namespace dxshim::install
