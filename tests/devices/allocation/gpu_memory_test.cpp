// GPU memory as a shared GPU is divided by it (devices/allocation/gpu_memory.h): the
// dxshim.io/gpu-memory grammar and its errors, how amounts are written, capacity, the default
// and what a hold takes. SpreadOrPack by memory: placement_test.cpp. Devices come from the example
// inventories (no GPU here).
#include "devices/allocation/gpu_memory.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "devices/allocation/device_request.h"

namespace dxshim::devices {
namespace {

constexpr std::uint64_t kGi = 1ull << 30;
constexpr std::uint64_t kMi = 1ull << 20;

// A 15Gi GPU, as the T4 of the example inventories.
Device T4() {
  Device d;
  d.id = "t4";
  d.dedicated_memory = 15 * kGi;
  return d;
}

AllocationPolicy Policy(unsigned max) {
  AllocationPolicy p;
  p.max_containers_per_device = max;
  return p;
}

DeviceRequest Request(const std::map<std::string, std::string>& annotations) {
  return *ParseDeviceRequest(annotations);
}

TEST(GpuMemory, TheAnnotationIsAQuantityWithAUnit) {
  EXPECT_EQ(ParseGpuMemory("6Gi"), 6 * kGi);
  EXPECT_EQ(ParseGpuMemory("512Mi"), 512 * kMi);
  EXPECT_EQ(ParseGpuMemory("6442450944"), 6 * kGi);
  EXPECT_EQ(ParseGpuMemory("2G"), 2000000000u);
  EXPECT_EQ(ParseGpuMemory("1.5Gi"), 1536 * kMi);  // Kubernetes quantities may have a fraction
  EXPECT_EQ(ParseGpuMemory("0.5Gi"), 512 * kMi);
  EXPECT_EQ(ParseGpuMemory("1.0000001Mi"), kMi + 1);  // rounded up to whole bytes
  for (const char* bad : {"", "0", "0Gi", "-1Gi", "6", "1048575", "6GB", "1.", "1.5", ".5Gi",
                          "1.0000000001Gi", "Gi", "6 Gi"}) {
    EXPECT_THROW(ParseGpuMemory(bad), std::invalid_argument) << bad;
  }
  try {
    ParseDeviceRequest({{"dxshim.io/gpu-memory", "6"}});
    ADD_FAILURE() << "accepted";
  } catch (const RequestError& e) {
    EXPECT_EQ(std::string(e.what()),
              "annotation dxshim.io/gpu-memory='6': has no unit: that is 6 bytes; write the unit, "
              "e.g. 6Gi or 6Mi");
  }
  try {
    ParseDeviceRequest({{"dxshim.io/gpu-memory", "-2Gi"}});
    ADD_FAILURE() << "accepted";
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find("dxshim.io/gpu-memory='-2Gi': is negative"),
              std::string::npos)
        << e.what();
  }
  // With every other key.
  const auto r = Request({{"dxshim.io/gpu-memory", "4Gi"},
                          {"dxshim.io/gpu", "2"},
                          {"dxshim.io/vendor", "nvidia"},
                          {"dxshim.io/min-memory", "8Gi"},
                          {"dxshim.io/class", "display"},
                          {"dxshim.io/containers", "app"}});
  EXPECT_EQ(r.gpu_memory, 4 * kGi);
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(Describe(r),
            "gpu=2 class=display vendor=nvidia min-memory=8192Mi gpu-memory=4Gi shared");
}

TEST(GpuMemory, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0B");
  EXPECT_EQ(FormatBytes(6 * kGi), "6Gi");
  EXPECT_EQ(FormatBytes(3840 * kMi), "3840Mi");
  EXPECT_EQ(FormatBytes(kMi + kMi / 2), "1536Ki");
  EXPECT_EQ(FormatBytes(kMi + 1), "1.0Mi");
  EXPECT_EQ(FormatBytes(2ull << 40), "2Ti");
}

TEST(GpuMemory, CapacityDefaultAndWhatAHoldTakes) {
  const auto t4 = T4();
  auto policy = Policy(4);
  EXPECT_EQ(MemoryCapacity(t4, policy), 15 * kGi);
  EXPECT_EQ(DefaultGpuMemory(t4, policy), 15 * kGi / 4);
  policy.gpu_memory_reserved = kGi;
  EXPECT_EQ(MemoryCapacity(t4, policy), 14 * kGi);
  EXPECT_EQ(DefaultGpuMemory(t4, policy), 14 * kGi / 4);
  policy.default_gpu_memory = 2 * kGi;
  EXPECT_EQ(DefaultGpuMemory(t4, policy), 2 * kGi);
  EXPECT_EQ(HeldGpuMemory(t4, std::nullopt, false, policy), 2 * kGi);
  EXPECT_EQ(HeldGpuMemory(t4, 5 * kGi, false, policy), 5 * kGi);
  EXPECT_EQ(HeldGpuMemory(t4, 5 * kGi, true, policy), 14 * kGi);
  policy.gpu_memory_reserved = 64 * kGi;  // more than the GPU has: nothing to share
  EXPECT_EQ(MemoryCapacity(t4, policy), 0u);
}

}  // namespace
}  // namespace dxshim::devices
