#include "devices/gpu_uuids.h"

#include <cstdio>
#include <utility>

namespace dxshim::devices {
namespace {

std::string BusDeviceFunction(const PciLocation& pci) {
  char text[32];
  std::snprintf(text, sizeof text, "%x:%x.%x", pci.bus, pci.device, pci.function);
  return text;
}

// Why NVML's answer for `pci`, asked without its segment, cannot be taken; "" when it can.
std::string SegmentDoubt(const PciLocation& pci, const std::optional<unsigned>& device_count) {
  if (pci.segment) return "";
  const auto prefix = "CUDA does not name its LUID, Windows does not say its PCI segment, and ";
  if (!device_count) {
    return prefix + std::string("NVML did not say how many NVIDIA GPUs it sees: its GPU at ") +
           BusDeviceFunction(pci) + " (read as segment 0) could be another";
  }
  if (*device_count != 1) {
    return prefix + std::string("NVML sees ") + std::to_string(*device_count) +
           " NVIDIA GPUs: its GPU at " + BusDeviceFunction(pci) +
           " (read as segment 0) could be another";
  }
  return "";
}

// Gives `adapters[index]` no UUID, for `why`.
void None(std::vector<AdapterUuid>& out, const std::vector<NvidiaAdapter>& adapters,
          std::size_t index, const std::string& why, std::vector<std::string>& debug) {
  out[index] = AdapterUuid{"", "none: " + why};
  debug.push_back("no UUID for " + adapters[index].name + ": " + why);
}

// The same UUID never goes to two adapters. CUDA's LUID is the exact join: an adapter it named
// keeps the UUID and an NVML answer that gave the same one is dropped; otherwise none keeps it.
void DropSharedUuids(const std::vector<NvidiaAdapter>& adapters, std::vector<AdapterUuid>& out,
                     std::vector<std::string>& debug) {
  std::map<std::string, std::vector<std::size_t>> holders;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!out[i].uuid.empty()) holders[out[i].uuid].push_back(i);
  }
  for (const auto& [uuid, indexes] : holders) {
    if (indexes.size() < 2) continue;
    std::size_t by_cuda = 0;
    for (const auto i : indexes) by_cuda += out[i].found_by == kFoundByCudaLuid ? 1u : 0u;
    std::string kept;
    if (by_cuda == 1) {
      for (const auto i : indexes) {
        if (out[i].found_by == kFoundByCudaLuid) kept = adapters[i].name;
      }
    }
    for (const auto i : indexes) {
      if (!kept.empty() && out[i].found_by == kFoundByCudaLuid) continue;
      const auto why = std::string(out[i].found_by == kFoundByCudaLuid ? "CUDA" : "NVML") +
                       " gave it " + uuid + ", which " +
                       (kept.empty() ? std::string("another adapter was given too: it can name "
                                                   "one GPU only")
                                     : "is " + kept + "'s by its LUID");
      out[i] = AdapterUuid{"", "none: " + why};
      debug.push_back("no UUID for " + adapters[i].name + ": " + why);
    }
  }
}

}  // namespace

std::string NvmlBusId(const PciLocation& pci) {
  if (!pci.segment) return BusDeviceFunction(pci);
  char text[32];
  std::snprintf(text, sizeof text, "%08x:%02x:%02x.%x", *pci.segment, pci.bus, pci.device,
                pci.function);
  return text;
}

std::vector<AdapterUuid> MatchNvidiaUuids(const std::vector<NvidiaAdapter>& adapters,
                                          const std::map<std::uint64_t, std::string>& cuda_by_luid,
                                          const NvmlLookup& nvml, std::vector<std::string>& debug) {
  std::vector<AdapterUuid> out(adapters.size());
  std::map<std::size_t, std::string> queries;  // adapter index -> NVML bus id
  for (std::size_t i = 0; i < adapters.size(); ++i) {
    if (const auto found = cuda_by_luid.find(adapters[i].luid); found != cuda_by_luid.end()) {
      out[i] = AdapterUuid{found->second, kFoundByCudaLuid};
    } else if (!adapters[i].pci) {
      None(out, adapters, i, "CUDA does not name its LUID and its PnP device has no PCI address",
           debug);
    } else {
      queries[i] = NvmlBusId(*adapters[i].pci);
    }
  }
  if (!queries.empty()) {
    std::vector<std::string> bus_ids;
    bus_ids.reserve(queries.size());
    for (const auto& [index, bus_id] : queries) bus_ids.push_back(bus_id);
    const auto answer = nvml(bus_ids);
    for (const auto& [index, bus_id] : queries) {
      const auto found = answer.uuids.find(bus_id);
      const auto no_segment = adapters[index].pci->segment
                                  ? std::string()
                                  : " (read as segment 0: Windows does not say its segment)";
      if (!answer.error.empty()) {
        None(out, adapters, index,
             "CUDA does not name its LUID and NVML gave nothing (" + answer.error + ")", debug);
      } else if (found == answer.uuids.end()) {
        None(out, adapters, index,
             "CUDA does not name its LUID and NVML names no GPU at PCI " + bus_id + no_segment,
             debug);
      } else if (const auto doubt = SegmentDoubt(*adapters[index].pci, answer.device_count);
                 !doubt.empty()) {
        None(out, adapters, index, doubt, debug);
      } else {
        out[index] = AdapterUuid{found->second, kFoundByNvmlPci};
      }
    }
  }
  DropSharedUuids(adapters, out, debug);
  return out;
}

}  // namespace dxshim::devices
