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

bool SameBusDeviceFunction(const PciLocation& a, const PciLocation& b) {
  return a.bus == b.bus && a.device == b.device && a.function == b.function;
}

// The names of the other adapters at `pci`'s bus:device.function, "" if none.
std::string OthersAt(const std::vector<NvidiaAdapter>& adapters, std::size_t self,
                     const PciLocation& pci) {
  std::string names;
  for (std::size_t i = 0; i < adapters.size(); ++i) {
    if (i == self || !adapters[i].pci || !SameBusDeviceFunction(*adapters[i].pci, pci)) continue;
    names += (names.empty() ? "" : ", ") + adapters[i].name;
  }
  return names;
}

// Which adapters NVML is asked about, by bus id; why the others cannot be goes to `debug`.
std::map<std::size_t, std::string> NvmlQueries(const std::vector<NvidiaAdapter>& adapters,
                                               const std::map<std::uint64_t, std::string>& cuda,
                                               std::vector<std::string>& debug) {
  std::map<std::size_t, std::string> queries;
  for (std::size_t i = 0; i < adapters.size(); ++i) {
    const auto& a = adapters[i];
    if (cuda.count(a.luid) != 0) continue;
    if (!a.pci) {
      debug.push_back("no UUID for " + a.name +
                      ": CUDA does not name its LUID and its PnP device has no PCI address");
      continue;
    }
    if (!a.pci->segment) {
      if (const auto others = OthersAt(adapters, i, *a.pci); !others.empty()) {
        debug.push_back("no UUID for " + a.name + ": CUDA does not name its LUID, Windows does " +
                        "not say its PCI segment, and " + others + " share its PCI address " +
                        BusDeviceFunction(*a.pci) + ": NVML could answer with another GPU");
        continue;
      }
    }
    queries[i] = NvmlBusId(*a.pci);
  }
  return queries;
}

}  // namespace

const char* ToString(UuidPath path) {
  return path == UuidPath::kCudaLuid ? "cuda-luid" : "nvml-pci";
}

std::string NvmlBusId(const PciLocation& pci) {
  if (!pci.segment) return BusDeviceFunction(pci);
  char text[32];
  std::snprintf(text, sizeof text, "%08x:%02x:%02x.%x", *pci.segment, pci.bus, pci.device,
                pci.function);
  return text;
}

std::vector<std::optional<AdapterUuid>> MatchNvidiaUuids(
    const std::vector<NvidiaAdapter>& adapters,
    const std::map<std::uint64_t, std::string>& cuda_by_luid, const NvmlLookup& nvml,
    std::vector<std::string>& debug) {
  std::vector<std::optional<AdapterUuid>> out(adapters.size());
  for (std::size_t i = 0; i < adapters.size(); ++i) {
    if (const auto found = cuda_by_luid.find(adapters[i].luid); found != cuda_by_luid.end()) {
      out[i] = AdapterUuid{found->second, UuidPath::kCudaLuid};
    }
  }
  const auto queries = NvmlQueries(adapters, cuda_by_luid, debug);
  if (!queries.empty()) {
    std::vector<std::string> bus_ids;
    bus_ids.reserve(queries.size());
    for (const auto& [index, bus_id] : queries) bus_ids.push_back(bus_id);
    const auto answers = nvml(bus_ids);
    for (const auto& [index, bus_id] : queries) {
      if (const auto found = answers.find(bus_id); found != answers.end()) {
        out[index] = AdapterUuid{found->second, UuidPath::kNvmlPci};
      }
    }
  }
  // The same UUID never goes to two adapters. CUDA's LUID is the exact join: an adapter it named
  // keeps the UUID and an NVML guess that gave the same one is dropped; otherwise none keeps it.
  std::map<std::string, std::vector<std::size_t>> holders;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i]) holders[out[i]->uuid].push_back(i);
  }
  for (const auto& [uuid, indexes] : holders) {
    if (indexes.size() < 2) continue;
    std::size_t by_cuda = 0;
    for (const auto i : indexes) by_cuda += out[i]->path == UuidPath::kCudaLuid ? 1u : 0u;
    std::string names;
    std::string kept;
    for (const auto i : indexes) {
      if (by_cuda == 1 && out[i]->path == UuidPath::kCudaLuid) {
        kept = adapters[i].name;
        continue;
      }
      names.append(names.empty() ? "" : " and ")
          .append(adapters[i].name)
          .append(" (")
          .append(ToString(out[i]->path))
          .append(")");
      out[i].reset();
    }
    auto line = "no UUID for " + names;
    line.append(": ").append(uuid);
    if (kept.empty()) {
      line += " was given to each, and it can name one GPU only";
    } else {
      line.append(" is ").append(kept).append("'s by its LUID");
    }
    debug.push_back(std::move(line));
  }
  return out;
}

}  // namespace dxshim::devices
