// Another GPU device plugin registered with kubelet beside dxshim's: each GPU is then advertised
// twice, once per resource, and kubelet hands the same GPU to a pod of each. Known by its
// resource name in kubelet's checkpoint (kubelet_checkpoint.h):
//   - AKS installs the GPU driver and Microsoft's Kubernetes DirectX device plugin on every
//     Windows GPU node pool (MicrosoftDocs/azure-aks-docs articles/aks/use-windows-gpu.md):
//     `microsoft.com/directx` (the plugin it links, aarnaud/k8s-directx-device-plugin
//     cmd/k8s-device-plugin/main.go, socket `directx.sock`); the page's sample output also shows
//     `microsoft.com.directx/gpu`. `az aks nodepool add --gpu-driver none` installs neither (the
//     older `--skip-gpu-driver-install` is retired since 2025-08-14).
//   - TensorWorks DirectX-Device-Plugins v0.0.1: `directx.microsoft.com/compute` (MCDM) and
//     `directx.microsoft.com/display` (WDDM), sockets `mcdm-<unix ms>.sock`, `wddm-<unix ms>.sock`.
//   - the Linux plugins, harmless to list: `nvidia.com/gpu`, `amd.com/gpu`, `gpu.intel.com/i915`.
// A resource with no device counts too: kubelet keeps a resource whose plugin left for
// endpointStopGracePeriod (5 min), and re-creates every checkpointed resource with no device at
// its start (kubernetes pkg/kubelet/cm/devicemanager manager.go).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "shim/install/system/node_system.h"

namespace dxshim::install {

// kubelet's device plugin folder on Windows, where its checkpoint is: pluginapi
// DevicePluginPathWindows, "%SYSTEMDRIVE%\var\lib\kubelet\device-plugins\" (k8s.io/kubelet
// pkg/apis/deviceplugin/v1beta1/constants.go).
inline constexpr char kWindowsDevicePluginDir[] =
    "%SystemDrive%\\var\\lib\\kubelet\\device-plugins";

struct OtherGpuPlugin {
  std::string resource;
  std::size_t devices = 0;  // healthy devices kubelet has registered now (0: none healthy)
  bool operator==(const OtherGpuPlugin&) const = default;
};

// The resources of `registered` (RegisteredDevices) that another GPU device plugin advertises, by
// name; dxshim's own (dxshim.io/...) and `own` (its configured resources) never.
std::vector<OtherGpuPlugin> OtherGpuPlugins(
    const std::map<std::string, std::vector<std::string>>& registered,
    const std::vector<std::string>& own = {});

// What they are and do beside dxshim, e.g. "kubelet has another GPU device plugin registered:
// microsoft.com/directx (1 device), directx.microsoft.com/display (registered, no healthy device
// now; ...); each GPU is then advertised twice, ..." (with dxshim's device plugin on; off,
// annotations only: both hand out the same GPUs).
std::string DescribeOtherGpuPlugins(const std::vector<OtherGpuPlugin>& plugins,
                                    bool dxshim_device_plugin);

// What to do about them (doctor's fix, install's refusal).
std::string OtherGpuPluginsFix();

// The other GPU plugins in the checkpoint in kubelet's device plugin folder `dir` (Windows path),
// read through `node`; none when there is no checkpoint. Throws NodeError when it cannot be read.
std::vector<OtherGpuPlugin> OtherGpuPluginsOn(NodeSystem& node, const std::string& dir,
                                              const std::vector<std::string>& own = {});

}  // namespace dxshim::install
