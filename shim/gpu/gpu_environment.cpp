#include "shim/gpu/gpu_environment.h"

#include <algorithm>

#include "shim/base/comma_list.h"

namespace dxshim {

GpuEnvironment GpuEnvironmentFor(const std::vector<devices::Device>& devices,
                                 std::optional<std::uint64_t> budget) {
  GpuEnvironment env;
  if (devices.empty()) return env;
  std::vector<std::string> cuda_uuids, without_uuid_ids, found_by_uuids;
  for (const auto& d : devices) {
    if (d.vendor_id != devices::kNvidiaVendorId) continue;
    // How discovery found each UUID, or why it found none (an inventory's GPU: not said).
    const auto how = d.uuid_found_by.empty() ? "" : " (" + d.uuid_found_by + ")";
    if (d.uuid.empty()) {
      without_uuid_ids.push_back(d.id + how);
    } else {
      cuda_uuids.push_back(d.uuid);
      if (!how.empty()) found_by_uuids.push_back(d.uuid + how);
    }
  }
  std::string cuda = JoinCommaList(cuda_uuids);
  const std::string without_uuid = JoinList(without_uuid_ids, ", ");
  const std::string found_by = JoinList(found_by_uuids, ", ");
  if (!without_uuid.empty()) {
    env.notes.push_back(std::string(kCudaVisibleDevicesEnv) + " not set: no UUID known for " +
                        without_uuid);
  } else if (!cuda.empty()) {
    env.variables.emplace_back(kCudaVisibleDevicesEnv, std::move(cuda));
    if (!found_by.empty()) {
      env.notes.push_back(std::string(kCudaVisibleDevicesEnv) + ": " + found_by);
    }
  }
  env.variables.emplace_back("DXSHIM_GPU_LUIDS", JoinCommaList(devices, [](const auto& d) {
                               return devices::FormatLuid(d.luid);
                             }));
  env.variables.emplace_back("DXSHIM_GPU_LOCATION_PATHS",
                             JoinCommaList(devices, [](const auto& d) { return d.location_path; }));
  env.variables.emplace_back("DXSHIM_GPU_VENDOR_IDS", JoinCommaList(devices, [](const auto& d) {
                               return devices::HexNumber(d.vendor_id, 4);
                             }));
  if (budget) env.variables.emplace_back(kGpuMemoryBytesEnv, std::to_string(*budget));
  const auto smallest = std::min_element(
      devices.begin(), devices.end(),
      [](const auto& a, const auto& b) { return a.dedicated_memory < b.dedicated_memory; });
  if (smallest->dedicated_memory == 0) {
    env.notes.push_back(std::string(kGpuMemoryTotalBytesEnv) + " not set: no memory known for " +
                        smallest->id);
  } else {
    env.variables.emplace_back(kGpuMemoryTotalBytesEnv, std::to_string(smallest->dedicated_memory));
  }
  return env;
}

}  // namespace dxshim
