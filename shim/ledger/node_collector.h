// The node's GPU state as metrics, read at each scrape from the objects that own it: the device
// snapshot (which GPUs, from which source, how often it was read) and the ledger
// (which pods hold which GPU, exclusively or shared).
#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "devices/device_source.h"
#include "shim/ledger/ledger.h"

namespace dxshim {

// Per GPU, labelled gpu (its id), vendor, model (its description) and luid (as windows_exporter
// writes it, devices::FormatLuid; empty for a GPU no longer in the snapshot):
//   dxshim_gpu_pod_slots   pods it may be given to at once (1 once a pod holds it exclusively)
//   dxshim_gpu_pods        pods holding it now
//   dxshim_gpu_exclusive   1 while a pod holds it exclusively
//   dxshim_gpu_memory_bytes  its memory pods share (dedicated memory less gpu-memory-reserved)
//   dxshim_gpu_memory_reserved_bytes  what the pods holding it reserved
//   dxshim_gpu_present
// and for the node: dxshim_gpus, dxshim_device_source_info{source}, dxshim_device_snapshot_*,
// dxshim_ledger_synced. A GPU that left the snapshot while pods still hold it is listed with
// present 0 until they let go.
std::vector<prometheus::MetricFamily> CollectNode(const devices::DeviceSnapshot& snapshot,
                                                  const Ledger& ledger);

// What keeps dxshim from being ready, one line each (empty: ready): the runtime connection, the
// ledger's first read, the device snapshot's first load.
std::vector<std::string> NotReady(bool runtime_connected, const devices::DeviceSnapshot& snapshot,
                                  const Ledger& ledger);

}  // namespace dxshim
