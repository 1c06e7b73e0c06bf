// Which NVIDIA UUID goes to which Windows adapter (devices/gpu_uuids.h), with the answers CUDA and
// NVML would give as data (no NVIDIA driver here; the Windows calls run under wine with stand-in
// DLLs in windows_devices_exe_test): CUDA's LUIDs first, whatever order CUDA lists them in; NVML
// by PCI address with the segment when CUDA names no LUID; two adapters at the same
// bus:device.function with no segment known get none, and NVML is not asked about them; a UUID
// NVML gives again stays with the adapter CUDA named, one NVML gives twice goes to neither; NVML
// is not loaded when CUDA named every adapter.
#include "devices/gpu_uuids.h"

#include <gtest/gtest.h>

namespace dxshim::devices {
namespace {

constexpr char kUuidA[] = "GPU-aaaaaaaa-0000-4000-8000-000000000001";
constexpr char kUuidB[] = "GPU-bbbbbbbb-0000-4000-8000-000000000002";

NvidiaAdapter Adapter(const std::string& name, std::uint64_t luid,
                      std::optional<PciLocation> pci = std::nullopt) {
  return {name, luid, pci};
}

// An NVML that knows `known` and records what it was asked.
struct FakeNvml {
  std::map<std::string, std::string> known;
  std::vector<std::vector<std::string>> asked;
  NvmlLookup Lookup() {
    return [this](const std::vector<std::string>& ids) {
      asked.push_back(ids);
      std::map<std::string, std::string> out;
      for (const auto& id : ids) {
        if (const auto it = known.find(id); it != known.end()) out[id] = it->second;
      }
      return out;
    };
  }
};

TEST(GpuUuids, NvmlBusIdsCarryTheSegmentWhenKnown) {
  EXPECT_EQ(NvmlBusId({1, 0, 0, 0}), "00000001:00:00.0");
  EXPECT_EQ(NvmlBusId({0x10000, 0x3b, 0x1f, 7}), "00010000:3b:1f.7");
  EXPECT_EQ(NvmlBusId({std::nullopt, 0x3b, 0, 0}), "3b:0.0");
}

TEST(GpuUuids, CudaLuidsMatchWhateverOrderCudaListsThem) {
  FakeNvml nvml;
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("first", 0x1111), Adapter("second", 0x2222)},
                                      {{0x2222, kUuidB}, {0x1111, kUuidA}}, nvml.Lookup(), debug);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0]->uuid, kUuidA);
  EXPECT_EQ(found[1]->uuid, kUuidB);
  EXPECT_EQ(found[0]->path, UuidPath::kCudaLuid);
  EXPECT_TRUE(nvml.asked.empty()) << "NVML is not asked when CUDA named every adapter";
  EXPECT_TRUE(debug.empty());
}

TEST(GpuUuids, WithoutCudaNvmlIsAskedWithTheSegment) {
  // Two GPUs of a cloud VM, each alone on its own segment at 0:0.0.
  FakeNvml nvml;
  nvml.known = {{"00000001:00:00.0", kUuidA}, {"00000002:00:00.0", kUuidB}, {"0:0.0", "GPU-x"}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids(
      {Adapter("first", 1, PciLocation{1, 0, 0, 0}), Adapter("second", 2, PciLocation{2, 0, 0, 0})},
      {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0]->uuid, kUuidA);
  EXPECT_EQ(found[1]->uuid, kUuidB);
  EXPECT_EQ(found[1]->path, UuidPath::kNvmlPci);
  ASSERT_EQ(nvml.asked.size(), 1u);
  EXPECT_EQ(nvml.asked[0], (std::vector<std::string>{"00000001:00:00.0", "00000002:00:00.0"}));
}

TEST(GpuUuids, TwoAdaptersAtOneAddressWithNoSegmentGetNone) {
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidA}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("GPU one", 1, PciLocation{std::nullopt, 0, 0, 0}),
                                       Adapter("GPU two", 2, PciLocation{std::nullopt, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_FALSE(found[0]);
  EXPECT_FALSE(found[1]);
  EXPECT_TRUE(nvml.asked.empty());
  ASSERT_EQ(debug.size(), 2u);
  EXPECT_EQ(debug[0],
            "no UUID for GPU one: CUDA does not name its LUID, Windows does not say its PCI "
            "segment, and GPU two share its PCI address 0:0.0: NVML could answer with another "
            "GPU");
}

TEST(GpuUuids, AnAdapterCudaNamesKeepsItsUuidBesideAnAmbiguousOne) {
  // A TCC board (no LUID) and a WDDM one at the same bus:device.function, no segment known:
  // CUDA names the second; the first cannot be told apart in NVML.
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidB}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("tcc", 1, PciLocation{std::nullopt, 0, 0, 0}),
                                       Adapter("wddm", 2, PciLocation{std::nullopt, 0, 0, 0})},
                                      {{2, kUuidB}}, nvml.Lookup(), debug);
  EXPECT_FALSE(found[0]);
  EXPECT_EQ(found[1]->uuid, kUuidB);
  EXPECT_TRUE(nvml.asked.empty());
}

TEST(GpuUuids, ALoneAdapterWithoutSegmentIsAskedAsBefore) {
  FakeNvml nvml;
  nvml.known = {{"3b:0.0", kUuidA}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids(
      {Adapter("t4", 1, PciLocation{std::nullopt, 0x3b, 0, 0}), Adapter("unknown", 2)}, {},
      nvml.Lookup(), debug);
  EXPECT_EQ(found[0]->uuid, kUuidA);
  EXPECT_FALSE(found[1]);
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug[0],
            "no UUID for unknown: CUDA does not name its LUID and its PnP device has no PCI "
            "address");
}

TEST(GpuUuids, AUuidNvmlGivesAgainStaysWithTheAdapterCudaNamed) {
  // CUDA names the first; NVML, asked about the second without a segment, answers with the same
  // GPU (another segment's 0:0.0 taken for segment 0's).
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidA}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("first", 1, PciLocation{std::nullopt, 0, 1, 0}),
                                       Adapter("second", 2, PciLocation{std::nullopt, 0, 0, 0})},
                                      {{1, kUuidA}}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0]->uuid, kUuidA);
  EXPECT_FALSE(found[1]);
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug[0],
            std::string("no UUID for second (nvml-pci): ") + kUuidA + " is first's by its LUID");
}

TEST(GpuUuids, AUuidGivenTwiceByNvmlGoesToNeither) {
  FakeNvml nvml;
  // An NVML that answers two addresses with one GPU.
  nvml.known = {{"3b:0.0", kUuidA}, {"00000001:00:00.0", kUuidA}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("first", 1, PciLocation{std::nullopt, 0x3b, 0, 0}),
                                       Adapter("second", 2, PciLocation{1, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_FALSE(found[0]);
  EXPECT_FALSE(found[1]);
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug.back(), std::string("no UUID for first (nvml-pci) and second (nvml-pci): ") +
                              kUuidA + " was given to each, and it can name one GPU only");
}

}  // namespace
}  // namespace dxshim::devices
