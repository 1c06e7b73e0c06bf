#include "shim/doctor/other_gpu_plugins_check.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "shim/install/kubelet/kubelet_checkpoint.h"
#include "shim/install/kubelet/other_gpu_plugins.h"

namespace dxshim::doctor {
namespace {

constexpr char kCheck[] = "other GPU device plugins";

}  // namespace

Check CheckOtherGpuPlugins(const config::ServeConfig& cfg) {
  const auto path = std::filesystem::path(cfg.device_plugin_dir) / install::kKubeletCheckpoint;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Ok(kCheck, "kubelet has no checkpoint yet (no " + path.string() +
                          "): no device plugin has registered");
  }
  std::vector<install::OtherGpuPlugin> found;
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("it cannot be opened");
    std::ostringstream text;
    text << in.rdbuf();
    found =
        install::OtherGpuPlugins(install::RegisteredDevices(text.str()),
                                 {cfg.device_plugin_resource, cfg.device_plugin_memory_resource});
  } catch (const std::exception& e) {
    return Warning(kCheck, path.string() + " cannot be read: " + e.what(),
                   "kubelet rewrites it at its next device update; restart kubelet if it stays");
  }
  if (found.empty()) return Ok(kCheck, "none registered with kubelet");
  const auto detail = install::DescribeOtherGpuPlugins(found, cfg.device_plugin);
  if (!cfg.device_plugin) return Warning(kCheck, detail, install::OtherGpuPluginsFix());
  return Failed(kCheck, detail, install::OtherGpuPluginsFix());
}

}  // namespace dxshim::doctor
