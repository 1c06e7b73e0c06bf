#include "shim/install/kubelet/other_gpu_plugins.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "shim/base/dxshim_keys.h"
#include "shim/install/kubelet/kubelet_checkpoint.h"

namespace dxshim::install {
namespace {

// The resources other GPU device plugins register (other_gpu_plugins.h cites each).
constexpr std::array<std::string_view, 5> kGpuResources = {
    "microsoft.com/directx", "microsoft.com.directx/gpu", "nvidia.com/gpu", "amd.com/gpu",
    "gpu.intel.com/i915"};
constexpr std::string_view kDirectxPrefix = "directx.microsoft.com/";  // TensorWorks' plugins

bool IsOtherGpuResource(std::string_view name) {
  if (name.starts_with(keys::kPrefix)) return false;
  return name.starts_with(kDirectxPrefix) ||
         std::find(kGpuResources.begin(), kGpuResources.end(), name) != kGpuResources.end();
}

std::string Devices(std::size_t n) {
  // manager.go drops a resource endpointStopGracePeriod (5 min) after its plugin left.
  if (n == 0) {
    return "registered, no healthy device now; kubelet drops it 5 min after its plugin left";
  }
  return std::to_string(n) + (n == 1 ? " device" : " devices");
}

}  // namespace

std::vector<OtherGpuPlugin> OtherGpuPlugins(
    const std::map<std::string, std::vector<std::string>>& registered,
    const std::vector<std::string>& own) {
  std::vector<OtherGpuPlugin> found;
  for (const auto& [name, ids] : registered) {
    if (!IsOtherGpuResource(name)) continue;
    if (std::find(own.begin(), own.end(), name) != own.end()) continue;
    found.push_back({name, ids.size()});
  }
  return found;
}

std::string DescribeOtherGpuPlugins(const std::vector<OtherGpuPlugin>& plugins,
                                    bool dxshim_device_plugin) {
  std::string out = "kubelet has another GPU device plugin registered: ";
  for (std::size_t i = 0; i < plugins.size(); ++i) {
    out += (i == 0 ? "" : ", ") + plugins[i].resource + " (" + Devices(plugins[i].devices) + ")";
  }
  if (dxshim_device_plugin) {
    return out +
           "; each GPU is then advertised twice, once per resource, and kubelet gives the same "
           "GPU to a pod of each resource";
  }
  return out +
         "; dxshim's device plugin is off (device-plugin false), but the other plugin and "
         "dxshim's annotations both hand out the same GPUs: a pod of the other resource and a "
         "pod asking dxshim by annotation can get the same GPU";
}

std::string OtherGpuPluginsFix() {
  return "on AKS, create the Windows GPU node pool with `--gpu-driver none` (az aks nodepool "
         "add; AKS then installs neither the driver nor its DirectX device plugin) and install "
         "the GPU driver yourself, or delete the other plugin's DaemonSet; elsewhere, remove the "
         "other device plugin from this node";
}

std::vector<OtherGpuPlugin> OtherGpuPluginsOn(NodeSystem& node, const std::string& dir,
                                              const std::vector<std::string>& own) {
  std::string path = dir;
  if (!path.empty() && path.back() != '\\' && path.back() != '/') path += '\\';
  path += kKubeletCheckpoint;
  const auto text = node.ReadFile(path);
  if (!text) return {};
  try {
    return OtherGpuPlugins(RegisteredDevices(*text), own);
  } catch (const std::exception& e) {
    throw NodeError("kubelet's checkpoint " + path + " cannot be read: " + e.what());
  }
}

}  // namespace dxshim::install
