#include "shim/device_plugin/plugin_resource.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace dxshim::device_plugin {

std::string DeviceId(const char* kind, const std::string& gpu_id, unsigned n) {
  // FNV-1a.
  std::uint32_t hash = 2166136261u;
  for (const char c : gpu_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s-%08x-%u", kind, hash, n);
  return buf;
}

bool PluginResource::Known(const std::string& id) const {
  std::lock_guard lock(listed_mutex_);
  return known_.count(id) > 0;
}

std::vector<PluginDevice> PluginResource::Listed(
    const devices::Inventory& inventory,
    const std::function<unsigned(const devices::Device&)>& per_gpu) {
  std::lock_guard lock(listed_mutex_);
  for (const auto& d : inventory.devices) {
    const auto n = per_gpu(d);
    const auto it = std::find_if(gpus_.begin(), gpus_.end(),
                                 [&](const auto& seen) { return seen.first == d.id; });
    if (it == gpus_.end()) {
      gpus_.emplace_back(d.id, n);
    } else {
      it->second = std::max(it->second, n);
    }
  }
  std::vector<PluginDevice> listed;
  for (const auto& [gpu, most] : gpus_) {
    const auto it = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                                 [&gpu = gpu](const devices::Device& d) { return d.id == gpu; });
    const unsigned has = it != inventory.devices.end() && it->present ? per_gpu(*it) : 0u;
    for (unsigned n = 0; n < most; ++n) {
      PluginDevice device{DeviceId(kind_, gpu, n), gpu, n < has};
      known_.insert(device.id);
      listed.push_back(std::move(device));
    }
  }
  return listed;
}

std::vector<std::string> PluginResource::PreferFrom(const std::vector<std::string>& ordered,
                                                    const std::vector<std::string>& must_include,
                                                    std::size_t size) {
  std::vector<std::string> out;
  std::set<std::string> chosen;
  for (const auto& id : must_include) {
    if (chosen.insert(id).second) out.push_back(id);
  }
  for (const auto& id : ordered) {
    if (out.size() >= size) break;
    if (chosen.insert(id).second) out.push_back(id);
  }
  return out;
}

std::string PluginResource::Refusal(const std::vector<std::string>& ids) {
  std::set<std::string> seen;
  for (const auto& id : ids) {
    if (!seen.insert(id).second) return "'" + id + "' is given twice to one container";
  }
  return "";
}

void MarkHeldOutside(std::vector<PluginDevice>& devices, const SchedulerGap& gap) {
  unsigned unseen = gap.unseen;
  for (auto it = devices.rbegin(); it != devices.rend() && unseen > 0; ++it) {
    if (!it->healthy || gap.counted.count(it->id) > 0) continue;
    it->healthy = false;
    --unseen;
  }
}

}  // namespace dxshim::device_plugin
