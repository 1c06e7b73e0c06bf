// Which NVIDIA GPU UUID (the "GPU-..." name that NVML reports and CUDA_VISIBLE_DEVICES takes)
// belongs to which Windows adapter. Portable, so that the decision is unit-tested on Linux; the
// calls that ask CUDA and NVML are in devices/windows/ (cuda_uuids.h, nvml_uuids.h).
//
// The exact join is the adapter LUID: CUDA's cuDeviceGetLuid names the same 8 bytes that DXCore
// gives each adapter. A GPU that CUDA does not name (no nvcuda.dll, cuInit failing, a board in
// TCC mode, which has no LUID) is looked up in NVML by its PCI address: with the segment
// ("%08x:%02x:%02x.%x") when Windows says it; without it only when no other NVIDIA adapter has
// the same bus:device.function, since NVML reads that form as segment 0 and cloud VMs commonly
// put each GPU alone on a segment of its own at 0:0.0. The same UUID never goes to two adapters;
// an adapter left without one is named in the debug lines.
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

enum class UuidPath { kCudaLuid, kNvmlPci };
const char* ToString(UuidPath path);  // "cuda-luid", "nvml-pci"

struct AdapterUuid {
  std::string uuid;
  UuidPath path = UuidPath::kCudaLuid;
};

// The PCI bus id NVML's nvmlDeviceGetHandleByPciBusId_v2 takes: "00000001:00:00.0" with the
// segment, "3b:0.0" (read by NVML as segment 0) without.
std::string NvmlBusId(const PciLocation& pci);

// NVML's UUIDs for the bus ids asked (those it knows); called at most once, and only when some
// adapter needs it.
using NvmlLookup =
    std::function<std::map<std::string, std::string>(const std::vector<std::string>&)>;

// For each of `adapters` (same order), its UUID and how it was found, or nullopt. `cuda_by_luid`
// is what CUDA named (empty when CUDA is absent or failed). Why an adapter has none goes to
// `debug`.
std::vector<std::optional<AdapterUuid>> MatchNvidiaUuids(
    const std::vector<NvidiaAdapter>& adapters,
    const std::map<std::uint64_t, std::string>& cuda_by_luid, const NvmlLookup& nvml,
    std::vector<std::string>& debug);

}  // namespace dxshim::devices
