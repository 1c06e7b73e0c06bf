// Which NVIDIA GPU UUID (the "GPU-..." name that NVML reports and CUDA_VISIBLE_DEVICES takes)
// belongs to which Windows adapter. Portable, so that the decision is unit-tested on Linux; CUDA
// and NVML are asked in a short-lived child (devices/windows/nvidia_query.h,
// devices/nvidia_answers.h).
//
// The exact join is the adapter LUID: CUDA's cuDeviceGetLuid names the same 8 bytes that DXCore
// gives each adapter. A GPU that CUDA does not name (no nvcuda.dll, cuInit failing, a child that
// hung or crashed) is looked up in NVML by its PCI address: with the segment ("%08x:%02x:%02x.%x")
// when Windows says it. Without it NVML reads "bus:device.function" as segment 0, and cloud VMs
// commonly put each GPU alone on a segment of its own at 0:0.0, so that answer is taken only when
// NVML sees one NVIDIA GPU in all (TCC boards and GPUs dxshim skipped count: NVML sees them). The
// same UUID never goes to two adapters. How each adapter's UUID was found, or why it has none, is
// its `found_by`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::devices {

struct PciLocation {
  std::optional<std::uint32_t> segment;  // the PCI segment (domain), when Windows says it
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  std::uint32_t function = 0;
};

// One NVIDIA adapter to name: how the log calls it, its LUID, its PCI address if known.
struct NvidiaAdapter {
  std::string name;
  std::uint64_t luid = 0;
  std::optional<PciLocation> pci;
};

// How an adapter's UUID was found.
inline constexpr char kFoundByCudaLuid[] = "cuda-luid";
inline constexpr char kFoundByNvmlPci[] = "nvml-pci";

// An adapter's UUID and how it was found ("cuda-luid", "nvml-pci"), or no UUID and
// "none: <why>".
struct AdapterUuid {
  std::string uuid;
  std::string found_by;
};

// The PCI bus id NVML's nvmlDeviceGetHandleByPciBusId_v2 takes: "00000001:00:00.0" with the
// segment, "3b:0.0" (read by NVML as segment 0) without.
std::string NvmlBusId(const PciLocation& pci);

// What NVML answered for the bus ids asked: the UUIDs it knows, how many NVIDIA GPUs it sees in
// all (nullopt when it could not say), and why it gave nothing at all ("" when it answered).
struct NvmlAnswer {
  std::map<std::string, std::string> uuids;
  std::optional<unsigned> device_count;
  std::string error;
};

// NVML asked about these bus ids; called at most once, and only when some adapter needs it.
using NvmlLookup = std::function<NvmlAnswer(const std::vector<std::string>&)>;

// For each of `adapters` (same order), its UUID and how it was found. `cuda_by_luid` is what CUDA
// named (empty when CUDA is absent or failed). Why an adapter has none also goes to `debug`.
std::vector<AdapterUuid> MatchNvidiaUuids(const std::vector<NvidiaAdapter>& adapters,
                                          const std::map<std::uint64_t, std::string>& cuda_by_luid,
                                          const NvmlLookup& nvml, std::vector<std::string>& debug);

}  // namespace dxshim::devices
