#include "shim/device_plugin/plugin_resource.h"

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
