// Which NVIDIA UUID goes to which Windows adapter (devices/gpu_uuids.h), with the answers CUDA and
// NVML would give as data (no NVIDIA driver here; the Windows calls run under wine with stand-in
// DLLs in windows_devices_exe_test): CUDA's LUIDs first, whatever order CUDA lists them in; NVML
// by PCI address with the segment when CUDA names no LUID; without the segment NVML's answer is
// taken only when NVML sees one NVIDIA GPU in all; a UUID NVML gives again stays with the adapter
// CUDA named, one NVML gives twice goes to neither; NVML is not asked when CUDA named every
// adapter. Each adapter says how its UUID was found, or why it has none.
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

// An NVML that knows `known`, sees `count` GPUs, and records what it was asked.
struct FakeNvml {
  std::map<std::string, std::string> known;
  std::optional<unsigned> count = 4;
  std::vector<std::vector<std::string>> asked;
  NvmlLookup Lookup() {
    return [this](const std::vector<std::string>& ids) {
      asked.push_back(ids);
      NvmlAnswer out;
      out.device_count = count;
      for (const auto& id : ids) {
        if (const auto it = known.find(id); it != known.end()) out.uuids[id] = it->second;
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
  EXPECT_EQ(found[0].uuid, kUuidA);
  EXPECT_EQ(found[1].uuid, kUuidB);
  EXPECT_EQ(found[0].found_by, "cuda-luid");
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
  EXPECT_EQ(found[0].uuid, kUuidA);
  EXPECT_EQ(found[1].uuid, kUuidB);
  EXPECT_EQ(found[1].found_by, "nvml-pci");
  ASSERT_EQ(nvml.asked.size(), 1u);
  EXPECT_EQ(nvml.asked[0], (std::vector<std::string>{"00000001:00:00.0", "00000002:00:00.0"}));
}

TEST(GpuUuids, WithoutTheSegmentNvmlSeeingMoreThanOneGpuIsRefused) {
  // One adapter dxshim enumerated, but NVML sees two GPUs (the other a TCC board, or an adapter
  // dxshim skipped): "0:0.0" is read as segment 0's and could be the other one.
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidA}};
  nvml.count = 2;
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("GPU one", 1, PciLocation{std::nullopt, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, "");
  const std::string why =
      "CUDA does not name its LUID, Windows does not say its PCI segment, and NVML sees 2 NVIDIA "
      "GPUs: its GPU at 0:0.0 (read as segment 0) could be another";
  EXPECT_EQ(found[0].found_by, "none: " + why);
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug[0], "no UUID for GPU one: " + why);
}

TEST(GpuUuids, WithoutTheSegmentAndNoCountFromNvmlIsRefused) {
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidA}};
  nvml.count = std::nullopt;
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("GPU one", 1, PciLocation{std::nullopt, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, "");
  EXPECT_NE(found[0].found_by.find("NVML did not say how many NVIDIA GPUs it sees"),
            std::string::npos)
      << found[0].found_by;
}

TEST(GpuUuids, WithoutTheSegmentTheOnlyGpuNvmlSeesIsTaken) {
  FakeNvml nvml;
  nvml.known = {{"3b:0.0", kUuidA}};
  nvml.count = 1;
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids(
      {Adapter("t4", 1, PciLocation{std::nullopt, 0x3b, 0, 0}), Adapter("unknown", 2)}, {},
      nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, kUuidA);
  EXPECT_EQ(found[0].found_by, "nvml-pci");
  EXPECT_EQ(found[1].uuid, "");
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug[0],
            "no UUID for unknown: CUDA does not name its LUID and its PnP device has no PCI "
            "address");
}

TEST(GpuUuids, TwoAdaptersAtOneAddressWithNoSegmentGetNone) {
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidA}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("GPU one", 1, PciLocation{std::nullopt, 0, 0, 0}),
                                       Adapter("GPU two", 2, PciLocation{std::nullopt, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, "");
  EXPECT_EQ(found[1].uuid, "");
  EXPECT_TRUE(found[0].found_by.starts_with("none: ")) << found[0].found_by;
  EXPECT_EQ(debug.size(), 2u);
}

TEST(GpuUuids, AnAdapterCudaNamesKeepsItsUuidBesideAnAmbiguousOne) {
  // A TCC board and a WDDM one at the same bus:device.function, no segment known: CUDA names the
  // second; NVML, which sees both, cannot tell the first apart.
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidB}};
  nvml.count = 2;
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("tcc", 1, PciLocation{std::nullopt, 0, 0, 0}),
                                       Adapter("wddm", 2, PciLocation{std::nullopt, 0, 0, 0})},
                                      {{2, kUuidB}}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, "");
  EXPECT_EQ(found[1].uuid, kUuidB);
  EXPECT_EQ(nvml.asked, (std::vector<std::vector<std::string>>{{"0:0.0"}}));
}

TEST(GpuUuids, WithoutTheSegmentNvmlKnowingNoGpuThereSaysSo) {
  // The usual cloud VM: its GPUs on segments 1..N, none on segment 0 at 0:0.0.
  FakeNvml nvml;
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("GPU one", 1, PciLocation{std::nullopt, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].found_by,
            "none: CUDA does not name its LUID and NVML names no GPU at PCI 0:0.0 (read as segment "
            "0: Windows does not say its segment)");
}

TEST(GpuUuids, WithoutTheSegmentAnNvmlCountingNoGpuIsNotBelieved) {
  FakeNvml nvml;
  nvml.known = {{"0:0.0", kUuidA}};
  nvml.count = 0;
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("GPU one", 1, PciLocation{std::nullopt, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, "");
}

TEST(GpuUuids, NvmlKnowingNoGpuAtTheAddressSaysSo) {
  FakeNvml nvml;
  std::vector<std::string> debug;
  const auto found =
      MatchNvidiaUuids({Adapter("first", 1, PciLocation{1, 0, 0, 0})}, {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].found_by,
            "none: CUDA does not name its LUID and NVML names no GPU at PCI 00000001:00:00.0");
}

TEST(GpuUuids, NvmlGivingNothingSaysWhy) {
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids(
      {Adapter("first", 1, PciLocation{1, 0, 0, 0})}, {},
      [](const std::vector<std::string>&) {
        return NvmlAnswer{{}, std::nullopt, "no NVIDIA UUIDs: nvml.dll could not be loaded"};
      },
      debug);
  EXPECT_EQ(found[0].found_by,
            "none: CUDA does not name its LUID and NVML gave nothing (no NVIDIA UUIDs: nvml.dll "
            "could not be loaded)");
}

TEST(GpuUuids, AUuidNvmlGivesAgainStaysWithTheAdapterCudaNamed) {
  // CUDA names the first; NVML, asked about the second with a segment, answers with the same GPU.
  FakeNvml nvml;
  nvml.known = {{"00000001:00:00.0", kUuidA}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids(
      {Adapter("first", 1, PciLocation{2, 0, 0, 0}), Adapter("second", 2, PciLocation{1, 0, 0, 0})},
      {{1, kUuidA}}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, kUuidA);
  EXPECT_EQ(found[1].uuid, "");
  ASSERT_EQ(debug.size(), 1u);
  EXPECT_EQ(debug[0], std::string("no UUID for second: NVML gave it ") + kUuidA +
                          ", which is first's by its LUID");
}

TEST(GpuUuids, AUuidGivenTwiceByNvmlGoesToNeither) {
  FakeNvml nvml;
  // An NVML that answers two addresses with one GPU.
  nvml.known = {{"00000002:3b:00.0", kUuidA}, {"00000001:00:00.0", kUuidA}};
  std::vector<std::string> debug;
  const auto found = MatchNvidiaUuids({Adapter("first", 1, PciLocation{2, 0x3b, 0, 0}),
                                       Adapter("second", 2, PciLocation{1, 0, 0, 0})},
                                      {}, nvml.Lookup(), debug);
  EXPECT_EQ(found[0].uuid, "");
  EXPECT_EQ(found[1].uuid, "");
  ASSERT_EQ(debug.size(), 2u);
  EXPECT_EQ(debug.back(), std::string("no UUID for second: NVML gave it ") + kUuidA +
                              ", which another adapter was given too: it can name one GPU only");
}

}  // namespace
}  // namespace dxshim::devices
