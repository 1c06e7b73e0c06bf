// GPU memory as a shared GPU is divided by it (devices/allocation/gpu_memory.h): the
// dxshim.io/gpu-memory grammar and its errors, how amounts are written, capacity, the default
// and what a hold takes. SpreadOrPack by memory: placement_test.cpp. Devices come from the example
// inventories (no GPU here).
#include "devices/allocation/gpu_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

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
  for (const char* bad : {"", "0", "0Gi", "-1Gi", "6", "1048575", "6GB", "1.", "1.5", "1Ki", "1m",
                          "Gi", "6 Gi", "1e3Mi", "20Ei"}) {
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

// What ParseGpuMemory says (the annotation's and serve's gpu-memory settings' one text).
std::string GpuMemoryError(const std::string& text, ZeroGpuMemory zero = ZeroGpuMemory::kRefused) {
  try {
    ParseGpuMemory(text, zero);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(GpuMemory, EveryKubernetesQuantityForm) {
  const std::pair<const char*, std::uint64_t> table[] = {
      {".5Gi", 512 * kMi},
      {"+6Gi", 6 * kGi},
      {"0.5G", 500000000},
      {"1.0000000001Gi", kGi + 1},  // any number of digits, rounded up
      {"1024Ki", kMi},
      {"1Ti", 1ull << 40},
      {"1Pi", 1ull << 50},
      {"1Ei", 1ull << 60},
      {"1048576", kMi},
      {"1048575.5", kMi},  // a plain fraction of a byte, rounded up to 1Mi
      {"1049k", 1049000},
      {"6e9", 6000000000ull},
      {"6E9", 6000000000ull},
      {"6e+9", 6000000000ull},
      {"1048576000m", kMi},
      {"1048576000000u", kMi},
      {"1048576000000000n", kMi},
      {"2T", 2000000000000ull},
      {"1P", 1000000000000000ull},
      {"1E", 1000000000000000000ull},
  };
  for (const auto& [text, bytes] : table) {
    EXPECT_EQ(ParseGpuMemory(text), bytes) << text;
  }
}

TEST(GpuMemory, ErrorsSayWhatIsWrong) {
  const std::pair<const char*, const char*> table[] = {
      {"6GB", "is not a quantity of memory such as 6Gi, 512Mi, 1.5Gi or 6442450944"},
      {"", "is not a quantity of memory such as 6Gi, 512Mi, 1.5Gi or 6442450944"},
      {"Gi", "is not a quantity of memory such as 6Gi, 512Mi, 1.5Gi or 6442450944"},
      {"1e3Mi", "is not a quantity of memory such as 6Gi, 512Mi, 1.5Gi or 6442450944"},
      {"6 Gi", "is not a quantity of memory such as 6Gi, 512Mi, 1.5Gi or 6442450944"},
      {"-2Gi", "is negative; give an amount of GPU memory, e.g. 6Gi"},
      {"-1", "is negative; give an amount of GPU memory, e.g. 6Gi"},
      {"-0.5Mi", "is negative; give an amount of GPU memory, e.g. 6Gi"},
      {"0", "is zero; give an amount of GPU memory, e.g. 6Gi"},
      {"0Gi", "is zero; give an amount of GPU memory, e.g. 6Gi"},
      {"-0", "is zero; give an amount of GPU memory, e.g. 6Gi"},
      {"16777216Ti", "is too large: more than 64 bits of bytes, and no GPU has that much memory"},
      {"20Ei", "is too large: more than 64 bits of bytes, and no GPU has that much memory"},
      {"18446744073709551616",
       "is too large: more than 64 bits of bytes, and no GPU has that much memory"},
      {"1e30", "is too large: more than 64 bits of bytes, and no GPU has that much memory"},
      {"6", "has no unit: that is 6 bytes; write the unit, e.g. 6Gi or 6Mi"},
      {"+6", "has no unit: that is 6 bytes; write the unit, e.g. 6Gi or 6Mi"},
      {"1048575",
       "has no unit: that is 1048575 bytes; write the unit, e.g. 1048575Gi or 1048575Mi"},
      {"1.5", "has no unit: that is 1.5 bytes; write the unit, e.g. 1.5Gi or 1.5Mi"},
      {"0.1", "has no unit: that is 0.1 bytes; write the unit, e.g. 0.1Gi or 0.1Mi"},
      // Under 1Mi whatever the unit.
      {"1Ki", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
      {"1023Ki", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
      {"0.9999Mi", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
      {"1M", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
      {"1000k", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
      {"1m", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
      {"6e3", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
      {"1e-9", "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi"},
  };
  for (const auto& [text, problem] : table) {
    EXPECT_EQ(GpuMemoryError(text), problem) << text;
    // The annotation says the same after naming itself and the value.
    try {
      ParseDeviceRequest({{"dxshim.io/gpu-memory", text}});
      ADD_FAILURE() << text << " accepted";
    } catch (const RequestError& e) {
      EXPECT_EQ(std::string(e.what()),
                "annotation dxshim.io/gpu-memory='" + std::string(text) + "': " + problem);
    }
  }
}

TEST(GpuMemory, ZeroOnlyWhereAllowed) {
  EXPECT_EQ(ParseGpuMemory("0", ZeroGpuMemory::kAllowed), 0u);
  EXPECT_EQ(ParseGpuMemory("0Gi", ZeroGpuMemory::kAllowed), 0u);
  EXPECT_EQ(ParseGpuMemory("512Mi", ZeroGpuMemory::kAllowed), 512 * kMi);
  // Allowing zero allows nothing else below 1Mi.
  EXPECT_EQ(GpuMemoryError("1Ki", ZeroGpuMemory::kAllowed),
            "is less than 1Mi; give at least 1Mi of GPU memory, e.g. 512Mi or 6Gi");
  EXPECT_EQ(GpuMemoryError("6", ZeroGpuMemory::kAllowed),
            "has no unit: that is 6 bytes; write the unit, e.g. 6Gi or 6Mi");
  EXPECT_EQ(GpuMemoryError("-1Gi", ZeroGpuMemory::kAllowed),
            "is negative; give an amount of GPU memory, e.g. 6Gi");
}

TEST(GpuMemory, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0B");
  EXPECT_EQ(FormatBytes(6 * kGi), "6Gi");
  EXPECT_EQ(FormatBytes(3840 * kMi), "3840Mi");
  EXPECT_EQ(FormatBytes(kMi + kMi / 2), "1536Ki");
  EXPECT_EQ(FormatBytes(kMi + 1), "1.0Mi");
  EXPECT_EQ(FormatBytes(2ull << 40), "2Ti");
  // Past 2^64/10, not a whole Ki (found by byte_quantity_fuzz): the tenths did not wrap.
  EXPECT_EQ(FormatBytes(~0ull), "17592186044415.9Mi");
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
