#include "devices/allocation/gpu_memory.h"

#include <stdexcept>

#include "devices/byte_quantity.h"

namespace dxshim::devices {

std::uint64_t MemoryCapacity(const Device& d, const AllocationPolicy& policy) {
  return d.dedicated_memory > policy.gpu_memory_reserved
             ? d.dedicated_memory - policy.gpu_memory_reserved
             : 0;
}

std::uint64_t DefaultGpuMemory(const Device& d, const AllocationPolicy& policy) {
  if (policy.default_gpu_memory) return policy.default_gpu_memory;
  const unsigned per_device =
      policy.max_containers_per_device ? policy.max_containers_per_device : 1;
  return MemoryCapacity(d, policy) / per_device;
}

std::uint64_t HeldGpuMemory(const Device& d, std::optional<std::uint64_t> recorded, bool exclusive,
                            const AllocationPolicy& policy) {
  if (exclusive) return MemoryCapacity(d, policy);
  return recorded ? *recorded : DefaultGpuMemory(d, policy);
}

std::uint64_t ParseGpuMemory(const std::string& text, ZeroGpuMemory zero) {
  const auto q = ReadByteQuantity(text);
  switch (q.problem) {
    case ByteQuantity::Problem::kNone:
      break;
    case ByteQuantity::Problem::kNotAQuantity:
      throw std::invalid_argument(
          "is not a quantity of memory such as 6Gi, 512Mi, 1.5Gi or 6442450944");
    case ByteQuantity::Problem::kNegative:
      throw std::invalid_argument("is negative; give an amount of GPU memory, e.g. 6Gi");
    case ByteQuantity::Problem::kTooLarge:
      throw std::invalid_argument(
          "is too large: more than 64 bits of bytes, and no GPU has that much memory");
  }
  if (q.bytes == 0) {
    if (zero == ZeroGpuMemory::kAllowed) return 0;
    throw std::invalid_argument("is zero; give an amount of GPU memory, e.g. 6Gi");
  }
  constexpr std::uint64_t kLeast = 1ull << 20;
  if (q.plain && q.bytes < kLeast) {
    const auto number = text.starts_with('+') ? text.substr(1) : text;
    throw std::invalid_argument("has no unit: that is " + number + " bytes; write the unit, e.g. " +
                                number + "Gi or " + number + "Mi");
  }
  if (q.bytes < kLeast) {
    throw std::invalid_argument(
        "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi");
  }
  return q.bytes;
}

std::string FormatBytes(std::uint64_t bytes) {
  static const std::pair<const char*, unsigned> kUnits[] = {
      {"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}};
  for (const auto& [unit, shift] : kUnits) {
    const std::uint64_t factor = 1ull << shift;
    if (bytes >= factor && bytes % factor == 0) return std::to_string(bytes >> shift) + unit;
  }
  if (bytes >= (1ull << 20)) {
    // Not a whole number of Mi: Mi with one decimal is what a message needs.
    // Whole Mi and the tenths of the rest apart: bytes * 10 would wrap past 2^64/10 (1.6Ei).
    const auto tenths = (bytes >> 20) * 10 + (((bytes & ((1ull << 20) - 1)) * 10) >> 20);
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "Mi";
  }
  return std::to_string(bytes) + "B";
}

}  // namespace dxshim::devices
