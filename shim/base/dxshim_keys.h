// Every dxshim.io/ name dxshim writes or reads, in one place: pod annotations, container
// annotations and labels, the extended resource, node labels. Each line says who writes the key
// and who reads it. (The values' grammar lives with their readers.)
#pragma once

#include <string_view>

namespace dxshim::keys {

// The prefix of them all. Pod annotations under it are a GPU request (devices/allocation).
inline constexpr char kPrefix[] = "dxshim.io/";

// Pod annotations: written by the pod's author, read by ParseDeviceRequest
// (devices/allocation/device_request.cpp) when kubelet creates a container of the pod.
inline constexpr char kGpu[] = "dxshim.io/gpu";                // how many GPUs
inline constexpr char kClass[] = "dxshim.io/class";            // display or compute
inline constexpr char kVendor[] = "dxshim.io/vendor";          // name or PCI id
inline constexpr char kMinMemory[] = "dxshim.io/min-memory";   // per GPU, e.g. 8Gi
inline constexpr char kRequires[] = "dxshim.io/requires";      // runtime files, APIs
inline constexpr char kDevice[] = "dxshim.io/device";          // pins
inline constexpr char kSharing[] = "dxshim.io/sharing";        // exclusive or shared
inline constexpr char kContainers[] = "dxshim.io/containers";  // the scope
inline constexpr char kGpuMemory[] = "dxshim.io/gpu-memory";   // reserved per GPU, e.g. 6Gi

// Every pod annotation of a GPU request, in the order messages list them.
inline constexpr std::string_view kRequestKeys[] = {
    kGpu, kClass, kVendor, kMinMemory, kGpuMemory, kRequires, kDevice, kSharing, kContainers};

// The values of kSharing (pod annotation) and kSharingLabel (container label).
inline constexpr char kExclusive[] = "exclusive";
inline constexpr char kShared[] = "shared";

// Container annotation: written by kubelet from dxshim's device plugin Allocate answer
// (shim/device_plugin/device_plugin_service.cpp) into the ContainerConfig of each container that
// asks for the extended resource; read by the CreateContainer scan and decision (shim/gpu) and by
// the runtime record (shim/runtime_record/runtime_record.cpp). The value lists the plugin slots
// kubelet gave the container, comma separated (blanks around an id are dropped, as in every comma
// list dxshim reads: shim/base/comma_list.h): their number is how many GPUs it gets. A pod cannot
// set it (kubelet puts pod annotations on the sandbox, not on containers), and it names no path.
inline constexpr char kPluginSlotsAnnotation[] = "dxshim.io/plugin-slots";
// The same for the memory resource (kGpuMemoryResource): the memory units kubelet gave the
// container, comma separated; their number times the serve key gpu-memory-unit is the memory the
// container reserves, spread evenly over its GPUs.
inline constexpr char kPluginMemoryUnitsAnnotation[] = "dxshim.io/plugin-memory-units";

// Container labels: written by the injection (shim/gpu/injection.cpp) into the created
// container, read back from the runtime by the runtime record
// (shim/runtime_record/runtime_record.cpp) to rebuild who holds which GPU.
inline constexpr char kDevicesLabel[] = "dxshim.io/devices";  // device ids, comma list
inline constexpr char kSharingLabel[] = "dxshim.io/sharing";  // exclusive or shared
// Bytes of GPU memory reserved on each of kDevicesLabel's GPUs, a comma list in the same order
// (one value: the same on all), when the pod asked an amount (dxshim.io/gpu-memory or the memory
// resource). Missing when it did not (and on containers created before memory was counted): the
// pod reserves the serve key default-gpu-memory as configured now, so that raising
// max-containers-per-device makes room as it did when pods were counted.
inline constexpr char kGpuMemoryLabel[] = "dxshim.io/gpu-memory";

// Container annotation: written by the injection (one line: what was chosen and why), read by
// people (crictl inspect) and shown by `dxshim rewrite`.
inline constexpr char kExplanationAnnotation[] = "dxshim.io/explanation";

// The extended resource dxshim's device plugin advertises by default (the serve key
// device-plugin-resource): registered with kubelet by shim/device_plugin, read by the scheduler
// from pods' resource limits; the pod annotation kGpu may name the same count.
inline constexpr char kGpuResource[] = "dxshim.io/gpu";
// The second extended resource (the serve key device-plugin-memory-resource): one device per
// gpu-memory-unit of every GPU's capacity; a container's limit is memory per pod, spread over its
// GPUs.
inline constexpr char kGpuMemoryResource[] = "dxshim.io/gpu-memory";

// Node labels: written by NodeLabels (devices/node_labels.cpp) into `dxshim devices --output
// labels`, the Node Feature Discovery file and install.ps1 --node-labels; read by the scheduler
// (nodeSelector, node affinity).
inline constexpr char kNodeLabelPrefix[] = "dxshim.io/gpu.";

}  // namespace dxshim::keys
