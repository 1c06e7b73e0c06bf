// Which pods may have GPUs and how they share them (the operator's configuration): the pod
// (sandbox), not the container, is the unit that holds a device and counts against its sharing
// limit (shim/ledger/ledger.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dxshim::devices {

enum class SpreadOrPack {
  kSpread,  // least-loaded device first
  kPack,    // most-loaded device that still has room first (keeps whole devices free)
};

struct AllocationPolicy {
  // Pods that may hold a device at once (the serve key max-containers-per-device keeps its
  // name); 1 makes every request exclusive in effect.
  unsigned max_containers_per_device = 1;
  // GPU memory (devices/allocation/gpu_memory.h): a GPU's capacity is its dedicated memory less
  // `gpu_memory_reserved` (kept for the host); a shared pod that names no amount reserves
  // `default_gpu_memory` on each of its GPUs, 0 meaning the capacity divided by
  // max_containers_per_device; a pod asking by the memory resource reserves its units of
  // `gpu_memory_unit`.
  std::uint64_t default_gpu_memory = 0;
  std::uint64_t gpu_memory_reserved = 0;
  std::uint64_t gpu_memory_unit = 1ull << 30;
  SpreadOrPack spread_or_pack = SpreadOrPack::kSpread;
  // Pod namespaces that may request GPUs: empty allow list = every namespace; the deny list
  // wins over the allow list.
  std::vector<std::string> allow_namespaces;
  std::vector<std::string> deny_namespaces;
  // A class/<GUID> or vpci-class-guid://<GUID> device kubelet already put in the config (all
  // GPUs of a class) is narrowed to one device that dxshim allocates.
  bool narrow_class_devices = false;
};

const char* ToString(SpreadOrPack p);

}  // namespace dxshim::devices
