#include "shim/ledger/node_collector.h"

#include <algorithm>
#include <set>
#include <string>

#include "devices/allocation/gpu_memory.h"
#include "shim/metrics/metric_family.h"

namespace dxshim {

using metrics::AddSample;
using metrics::Family;

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::vector<MetricFamily> CollectNode(const devices::DeviceSnapshot& snapshot,
                                      const Ledger& ledger) {
  const auto inventory = snapshot.Current();
  const auto usage = ledger.Usage();
  const unsigned per_device = ledger.policy().max_containers_per_device;

  auto slots = Family("dxshim_gpu_pod_slots",
                      "Pods a GPU may be given to at once (max-containers-per-device; 1 while a "
                      "pod holds it exclusively)",
                      MetricType::Gauge);
  auto pods = Family("dxshim_gpu_pods", "Pods holding a GPU now", MetricType::Gauge);
  auto exclusive =
      Family("dxshim_gpu_exclusive", "1 while a pod holds the GPU exclusively", MetricType::Gauge);
  auto memory = Family("dxshim_gpu_memory_bytes",
                       "A GPU's memory pods share: its dedicated memory less gpu-memory-reserved",
                       MetricType::Gauge);
  auto reserved = Family("dxshim_gpu_memory_reserved_bytes",
                         "GPU memory the pods holding a GPU reserved on it (all of it while one "
                         "holds it exclusively)",
                         MetricType::Gauge);
  auto present = Family("dxshim_gpu_present",
                        "1 for a GPU in the device snapshot; 0 for one that left it while pods "
                        "still hold it",
                        MetricType::Gauge);
  const auto& policy = ledger.policy();
  // `d`: the GPU, or one with only an id when it left the snapshot.
  const auto add_gpu = [&](const devices::Device& d, bool in_snapshot) {
    const std::vector<ClientMetric::Label> labels = {
        {"gpu", d.id},
        {"vendor", d.vendor},
        {"model", d.description},
        {"luid", in_snapshot ? devices::FormatLuid(d.luid) : ""}};
    const auto held = usage.find(d.id);
    const devices::DeviceUsage use = held == usage.end() ? devices::DeviceUsage{} : held->second;
    AddSample(slots, labels, use.exclusive ? 1 : per_device);
    AddSample(pods, labels, use.pods);
    AddSample(exclusive, labels, use.exclusive ? 1 : 0);
    AddSample(memory, labels, static_cast<double>(devices::MemoryCapacity(d, policy)));
    AddSample(reserved, labels, static_cast<double>(devices::ReservedOn(d, use, policy)));
    AddSample(present, labels, in_snapshot ? 1 : 0);
  };
  std::set<std::string> listed;
  for (const auto& d : inventory->devices) {
    add_gpu(d, true);
    listed.insert(d.id);
  }
  for (const auto& [id, use] : usage) {
    if (use.pods == 0 || listed.contains(id)) continue;
    devices::Device gone;
    gone.id = id;
    add_gpu(gone, false);
  }

  const auto stats = snapshot.stats();
  auto gpus = Family("dxshim_gpus", "GPUs in the device snapshot (what dxshim hands out)",
                     MetricType::Gauge);
  AddSample(gpus, {}, static_cast<double>(inventory->devices.size()));
  auto source =
      Family("dxshim_device_source_info",
             "Always 1; the source label says where the GPUs come from", MetricType::Gauge);
  AddSample(source, {{"source", snapshot.source_name()}}, 1);
  auto loads = Family("dxshim_device_snapshot_loads_total",
                      "Successful reads of the device source (at start and after each change)",
                      MetricType::Counter);
  AddSample(loads, {}, static_cast<double>(stats.loads));
  auto failures = Family("dxshim_device_snapshot_load_failures_total",
                         "Reads of the device source that failed (the previous GPUs were kept)",
                         MetricType::Counter);
  AddSample(failures, {}, static_cast<double>(stats.failures));
  auto generation =
      Family("dxshim_device_snapshot_generation",
             "Changes of the device snapshot since start (1: as first loaded)", MetricType::Gauge);
  AddSample(generation, {}, static_cast<double>(inventory->generation));
  auto synced = Family("dxshim_ledger_synced",
                       "1 once the GPU ledger has been read from the runtime", MetricType::Gauge);
  AddSample(synced, {}, ledger.synced() ? 1 : 0);

  std::vector<MetricFamily> out;
  for (auto* f : {&slots, &pods, &exclusive, &memory, &reserved, &present, &gpus, &source, &loads,
                  &failures, &generation, &synced}) {
    out.push_back(std::move(*f));
  }
  return out;
}

std::vector<std::string> NotReady(bool runtime_connected, const devices::DeviceSnapshot& snapshot,
                                  const Ledger& ledger) {
  std::vector<std::string> missing;
  if (!runtime_connected) missing.emplace_back("runtime: not connected");
  if (!ledger.synced()) {
    missing.emplace_back("ledger: not yet read from the runtime (GPU requests wait for it)");
  }
  if (!snapshot.stats().loaded) {
    missing.push_back("devices: " + snapshot.source_name() + " has not been read successfully");
  }
  return missing;
}

}  // namespace dxshim
