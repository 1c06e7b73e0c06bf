// What the `nvidia-uuids` child prints and discovery reads back (devices/nvidia_answers.h): each
// report survives the round trip; an answer that is not the child's JSON is refused with the
// reason; and CUDA's devices become UUIDs by LUID only where they can: not a device with an
// error, a zero LUID, a UUID that is not NVML's form, or a LUID two devices give.
#include "devices/nvidia_answers.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "devices/device.h"

namespace dxshim::devices {
namespace {

constexpr char kUuidA[] = "GPU-aaaaaaaa-0000-4000-8000-000000000001";
constexpr char kUuidB[] = "GPU-bbbbbbbb-0000-4000-8000-000000000002";

CudaDeviceAnswer Device(int ordinal, std::uint64_t luid, const std::string& uuid) {
  return {ordinal, luid, uuid, "cuDeviceGetUuid_v2", ""};
}

TEST(NvidiaAnswers, ACudaReportSurvivesTheRoundTrip) {
  CudaReport report;
  report.notes = {"CUDA_VISIBLE_DEVICES was set in this process: removed before cuInit"};
  report.devices = {Device(0, 0xd1b8, kUuidA),
                    Device(1, (2ull << 32) | 0xd1a7, kUuidB),
                    {2, 0, "", "", "no LUID (cuDeviceGetLuid: CUDA error 801)"}};
  report.devices[1].uuid_call = "cuDeviceGetUuid";
  const auto json = WriteCudaReport(report);
  EXPECT_NE(json.find("\"luid\": \"" + FormatLuid(0xd1b8) + "\""), std::string::npos) << json;
  const auto back = ReadCudaReport(json);
  EXPECT_EQ(back.error, "");
  EXPECT_EQ(back.notes, report.notes);
  ASSERT_EQ(back.devices.size(), 3u);
  EXPECT_EQ(back.devices[1].luid, (2ull << 32) | 0xd1a7);
  EXPECT_EQ(back.devices[1].uuid, kUuidB);
  EXPECT_EQ(back.devices[1].uuid_call, "cuDeviceGetUuid");
  EXPECT_EQ(back.devices[2].error, "no LUID (cuDeviceGetLuid: CUDA error 801)");
  EXPECT_EQ(back.devices[2].ordinal, 2);
}

TEST(NvidiaAnswers, AnNvmlReportSurvivesTheRoundTrip) {
  NvmlReport report;
  report.device_count = 4;
  report.uuids = {{"00000001:00:00.0", kUuidA}};
  report.misses = {{"3b:0.0", "nvmlDeviceGetHandleByPciBusId_v2 failed (NVML error 6)"}};
  const auto back = ReadNvmlReport(WriteNvmlReport(report));
  EXPECT_EQ(back.device_count, 4u);
  EXPECT_EQ(back.uuids, report.uuids);
  EXPECT_EQ(back.misses, report.misses);
  NvmlReport failed;
  failed.error = "no NVIDIA UUIDs: nvmlInit_v2 failed (NVML error 9)";
  const auto none = ReadNvmlReport(WriteNvmlReport(failed));
  EXPECT_EQ(none.error, failed.error);
  EXPECT_FALSE(none.device_count);
}

TEST(NvidiaAnswers, WhatIsNotTheChildsJsonIsRefusedWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "has no \"cuda\" object"},
      {"Segmentation fault", "has no \"cuda\" object"},
      {"{\"cuda\": {\"devices\": [{\"ordinal\": 0, \"luid\": \"d1b8\", \"uuid\": \"x\"}]}}",
       "has a device whose LUID 'd1b8' is not a LUID"},
      {"{\"cuda\": {\"devices\": [{\"luid\": \"0x00000000_0x0000D1B8\"}]}}",
       "has a device without an ordinal"},
      {"{\"cuda\": {\"devices\": {}}}", "has \"devices\" that are not a list"},
      {"{\"cuda\": {\"error\": [1]}}", "has a \"error\" that is not a string"},
      {"{\"cuda\": [", "is not JSON"},
  };
  for (const auto& [json, reason] : cases) {
    try {
      ReadCudaReport(json);
      ADD_FAILURE() << "accepted: " << json;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos)
          << json << " -> " << e.what();
    }
  }
  EXPECT_THROW(ReadNvmlReport("{\"nvml\": {\"device_count\": \"four\"}}"), std::runtime_error);
  // A UUID that is not NVML's form never reaches CUDA_VISIBLE_DEVICES (a comma would add GPUs).
  const auto odd = ReadNvmlReport(std::string("{\"nvml\": {\"uuids\": {\"0:0.0\": \"") + kUuidA +
                                  "," + kUuidB + "\"}}}");
  EXPECT_TRUE(odd.uuids.empty());
  EXPECT_EQ(odd.misses.at("0:0.0"),
            std::string("NVML gave '") + kUuidA + "," + kUuidB + "', not a GPU UUID");
  EXPECT_THROW(ReadNvmlReport("{\"cuda\": {}}"), std::runtime_error);
}

TEST(NvidiaAnswers, OnlyDevicesWithOneGoodLuidAndUuidNameAnAdapter) {
  CudaReport report;
  report.devices = {Device(0, 0x1111, kUuidA),
                    {1, 0, "", "", "no LUID (cuDeviceGetLuid: CUDA error 801)"},
                    Device(2, 0, kUuidB),  // zero LUID
                    Device(3, 0x2222, "GPU-not-a-uuid"),
                    Device(4, 0x3333, kUuidB),
                    Device(5, 0x3333, "GPU-cccccccc-0000-4000-8000-000000000003"),
                    Device(6, 0x4444, kUuidB),
                    Device(7, 0x4444, "garbage")};
  std::vector<std::string> debug;
  const auto by_luid = CudaUuidsByLuid(report, debug);
  EXPECT_EQ(by_luid, (std::map<std::uint64_t, std::string>{{0x1111, kUuidA}}));
  ASSERT_EQ(debug.size(), 6u);
  EXPECT_EQ(debug[0], "CUDA device 1: no LUID (cuDeviceGetLuid: CUDA error 801)");
  EXPECT_EQ(debug[1], "CUDA device 2: no LUID (cuDeviceGetLuid gave zeros)");
  EXPECT_EQ(debug[2], "CUDA device 3: cuDeviceGetUuid_v2 gave 'GPU-not-a-uuid', not a GPU UUID");
  EXPECT_EQ(debug[3], "CUDA device 7: cuDeviceGetUuid_v2 gave 'garbage', not a GPU UUID");
  EXPECT_EQ(debug[4], "CUDA devices 4 and 5 give one LUID, " + FormatLuid(0x3333) +
                          ": it names none of them");
  EXPECT_EQ(debug[5], "CUDA devices 6 and 7 give one LUID, " + FormatLuid(0x4444) +
                          ": it names none of them");
}

}  // namespace
}  // namespace dxshim::devices
