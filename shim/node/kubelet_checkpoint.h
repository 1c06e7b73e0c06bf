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
// device plugin lines) and by `dxshim install` (another GPU device plugin: other_gpu_plugins.h),
// hence here, below both.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace dxshim::node {

inline constexpr char kKubeletCheckpoint[] = "kubelet_internal_checkpoint";

// RegisteredDevices by resource name. Throws std::runtime_error naming what is wrong when the
// text is not such a checkpoint.
std::map<std::string, std::vector<std::string>> RegisteredDevices(const std::string& json);

}  // namespace dxshim::node
