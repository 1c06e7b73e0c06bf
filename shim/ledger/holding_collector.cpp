#include "shim/ledger/holding_collector.h"

#include <algorithm>
#include <string>

#include "devices/allocation/gpu_memory.h"
#include "shim/metrics/metric_family.h"

namespace dxshim {

std::vector<prometheus::MetricFamily> CollectHoldings(const devices::DeviceSnapshot& snapshot,
                                                      const Ledger& ledger) {
  const auto inventory = snapshot.Current();
  const auto& policy = ledger.policy();
  auto info =
      metrics::Family("dxshim_container_gpu_info",
                      "Always 1: a container dxshim gave a GPU, while its pod holds it; luid as "
                      "windows_exporter's gpu collector labels the same GPU",
                      prometheus::MetricType::Gauge);
  auto reserved =
      metrics::Family("dxshim_pod_gpu_memory_reserved_bytes",
                      "GPU memory a pod holds on a GPU: what it asked, else the default, or "
                      "all of it while it holds the GPU exclusively",
                      prometheus::MetricType::Gauge);
  for (const auto& holding : ledger.Holdings()) {
    for (std::size_t i = 0; i < holding.device_ids.size(); ++i) {
      const auto& id = holding.device_ids[i];
      const auto found = std::find_if(inventory->devices.begin(), inventory->devices.end(),
                                      [&](const devices::Device& d) { return d.id == id; });
      const devices::Device* device = found == inventory->devices.end() ? nullptr : &*found;
      const std::string luid = device ? devices::FormatLuid(device->luid) : "";
      const auto asked = holding.memory[i];
      const std::uint64_t bytes =
          device ? devices::HeldGpuMemory(*device, asked, holding.exclusive, policy)
                 : asked.value_or(0);
      metrics::AddSample(
          reserved,
          {{"namespace", holding.pod_namespace}, {"pod", holding.pod}, {"gpu", id}, {"luid", luid}},
          static_cast<double>(bytes));
      // A hold whose containers are not known by name (none should be) still shows its pod.
      const std::vector<std::string> unnamed = {""};
      for (const auto& container : holding.containers.empty() ? unnamed : holding.containers) {
        metrics::AddSample(info,
                           {{"namespace", holding.pod_namespace},
                            {"pod", holding.pod},
                            {"container", container},
                            {"gpu", id},
                            {"luid", luid},
                            {"location_path", device ? device->location_path : ""},
                            {"vendor", device ? device->vendor : ""}},
                           1);
      }
    }
  }
  std::vector<prometheus::MetricFamily> out;
  out.push_back(std::move(info));
  out.push_back(std::move(reserved));
  return out;
}

}  // namespace dxshim
