// Which pod is on which GPU, as metrics, read at each scrape from the ledger's committed holds
// (Ledger::Holdings): the series operators join with windows_exporter's GPU series, which are
// labelled by adapter LUID and never by pod (deploy/monitoring/).
#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "devices/device_source.h"
#include "shim/ledger/ledger.h"

namespace dxshim {

//   dxshim_container_gpu_info{namespace, pod, container, gpu, luid, location_path, vendor} 1
//     one per (container given GPUs, GPU), from the CRI request's sandbox and container metadata,
//     and after a restart from the runtime's record of them; gone when the pod's hold ends.
//   dxshim_pod_gpu_memory_reserved_bytes{namespace, pod, gpu, luid}
//     the GPU memory the pod holds there: what it asked, else the default as configured now, or
//     all of it while it holds the GPU exclusively.
// luid is written as windows_exporter writes it (devices::FormatLuid). A GPU that left the
// device snapshot while pods still hold it has empty luid, location_path and vendor, and a
// reservation of what the pod asked (0 when it asked nothing: its capacity is unknown).
std::vector<prometheus::MetricFamily> CollectHoldings(const devices::DeviceSnapshot& snapshot,
                                                      const Ledger& ledger);

}  // namespace dxshim
