// The dxshim.io/ annotation grammar.
#include "devices/allocation/device_request.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace dxshim::devices {
namespace {

using Annotations = std::map<std::string, std::string>;

std::string ErrorOf(const Annotations& a) {
  try {
    ParseDeviceRequest(a);
  } catch (const RequestError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceRequest, NoDxshimAnnotationMeansNoRequest) {
  EXPECT_FALSE(ParseDeviceRequest({}).has_value());
  EXPECT_FALSE(
      ParseDeviceRequest({{"dxshim.io", "1"}, {"example.com/gpu", "1"}, {"dxshim.iox/gpu", "1"}})
          .has_value());
}

TEST(DeviceRequest, EveryKey) {
  const auto r = ParseDeviceRequest({{"dxshim.io/gpu", "2"},
                                     {"dxshim.io/class", "Display"},
                                     {"dxshim.io/vendor", "NVIDIA"},
                                     {"dxshim.io/min-memory", "8Gi"},
                                     {"dxshim.io/requires", "cuda, nvml.dll,OpenCL"},
                                     {"dxshim.io/sharing", "exclusive"},
                                     {"dxshim.io/containers", "app,init-setup"},
                                     {"other", "x"}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->count, 2u);
  EXPECT_EQ(r->device_class, DeviceClass::kDisplay);
  EXPECT_EQ(r->vendor, "nvidia");
  EXPECT_EQ(r->min_memory, 8ull << 30);
  EXPECT_EQ(r->required_files, (std::vector<std::string>{"nvcuda.dll", "nvml.dll", "OpenCL.dll"}));
  EXPECT_TRUE(r->exclusive);
  EXPECT_EQ(r->containers, (std::vector<std::string>{"app", "init-setup"}));
  EXPECT_TRUE(AppliesTo(*r, "init-setup"));
  EXPECT_FALSE(AppliesTo(*r, "sidecar"));
  EXPECT_EQ(Describe(*r),
            "gpu=2 class=display vendor=nvidia min-memory=8192Mi "
            "requires=nvcuda.dll,nvml.dll,OpenCL.dll exclusive");
}

TEST(DeviceRequest, DefaultsAndPins) {
  auto r = ParseDeviceRequest({{"dxshim.io/class", "compute"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count, 1u);
  EXPECT_FALSE(r->exclusive);
  EXPECT_TRUE(AppliesTo(*r, "anything"));
  r = ParseDeviceRequest({{"dxshim.io/device", "PCIROOT(0)#PCI(1E00), 0x00000000_0x0000D1A7"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count, 2u);  // one per pin unless gpu says otherwise
  r = ParseDeviceRequest({{"dxshim.io/device", "a,b,c"}, {"dxshim.io/gpu", "1"}});
  EXPECT_EQ(r->count, 1u);
  r = ParseDeviceRequest({{"dxshim.io/vendor", "0x10DE"}});
  EXPECT_EQ(r->vendor_id, 0x10de);
}

// A LUID pin in any spelling dxshim reads is kept as FormatLuid writes it, so the explanation and
// the logs show the one spelling; the same LUID twice is refused whatever its spellings.
TEST(DeviceRequest, LuidPinsInEverySpellingAreKeptInTheOne) {
  const auto r = ParseDeviceRequest(
      {{"dxshim.io/device",
        "0x00000000_0x0000D1A7,0x00000001:0x0000d1a7,0x0000000b_0x0000d1a7,0xc0000d1a7,"
        "0XD1B8,PCIROOT(0)#PCI(1E00)"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pins, (std::vector<std::string>{"0x00000000_0x0000D1A7", "0x00000001_0x0000D1A7",
                                               "0x0000000B_0x0000D1A7", "0x0000000C_0x0000D1A7",
                                               "0x00000000_0x0000D1B8", "PCIROOT(0)#PCI(1E00)"}));
  EXPECT_EQ(Describe(*r),
            "gpu=6 device=0x00000000_0x0000D1A7,0x00000001_0x0000D1A7,0x0000000B_0x0000D1A7,"
            "0x0000000C_0x0000D1A7,0x00000000_0x0000D1B8,PCIROOT(0)#PCI(1E00) shared");
  EXPECT_EQ(ErrorOf({{"dxshim.io/device", "0x00000000_0x0000D1A7,0x00000000:0x0000d1a7"}}),
            "annotation dxshim.io/device='0x00000000_0x0000D1A7,0x00000000:0x0000d1a7': names "
            "LUID 0x00000000_0x0000D1A7 twice");
  EXPECT_EQ(ErrorOf({{"dxshim.io/device", "0xd1a7,0x00000000_0x0000d1a7"}}),
            "annotation dxshim.io/device='0xd1a7,0x00000000_0x0000d1a7': names LUID "
            "0x00000000_0x0000D1A7 twice");
}

TEST(DeviceRequest, MalformedLuidPinsAreRefusedSayingWhy) {
  const std::string form = " is not a LUID (0xHHHHHHHH_0xLLLLLLLL, e.g. 0x00000000_0x0000D1A2): ";
  const std::pair<std::string, std::string> cases[] = {
      {"00000000_0x0000D1A7", "the high part has no 0x"},
      {"0x00000000_0000D1A7", "the low part has no 0x"},
      {"00000000:0000d1a7", "the high part has no 0x"},
      {"0x000000000_0x0000D1A7", "the high part has 9 hex digits, more than 8"},
      {"0x00000000_0x00000D1A7", "the low part has 9 hex digits, more than 8"},
      {"0x00000000_0xD1A7!", "the low part 'D1A7!' is not hex digits"},
      {"0xgpu", "the number 'gpu' is not hex digits"},
      {"0x1_0x2_0x3", "more than two parts"},
  };
  for (const auto& [pin, why] : cases) {
    EXPECT_EQ(ErrorOf({{"dxshim.io/device", "PCIROOT(0)#PCI(1E00)," + pin}}),
              "annotation dxshim.io/device='PCIROOT(0)#PCI(1E00)," + pin + "': '" + pin + "'" +
                  form + why);
  }
  // Not meant as LUIDs: ids and location paths stay pins, whatever they contain.
  for (const std::string pin : {"0000:e6:00.0", "gpu_0", "PCIROOT(0)#PCI(1E00)", "d1a7"}) {
    const auto r = ParseDeviceRequest({{"dxshim.io/device", pin}});
    ASSERT_TRUE(r) << pin;
    EXPECT_EQ(r->pins, std::vector<std::string>{pin});
  }
}

TEST(DeviceRequest, PinsMatchIdLuidOrLocationPath) {
  Device d;
  d.id = "PCI\\VEN_10DE&DEV_1EB8\\3&2411E6FE&1&F0";
  d.luid = 0x1'0000d1a7ull;
  d.location_path = "PCIROOT(0)#PCI(1E00)";
  EXPECT_TRUE(PinMatches("pci\\ven_10de&dev_1eb8\\3&2411e6fe&1&f0", d));
  EXPECT_TRUE(PinMatches("pciroot(0)#pci(1e00)", d));
  EXPECT_TRUE(PinMatches("0x00000001_0x0000D1A7", d));
  EXPECT_TRUE(PinMatches("0x00000001_0x0000d1a7", d));
  EXPECT_TRUE(PinMatches("0x00000001:0x0000d1a7", d));  // dxshim's earlier spelling
  EXPECT_TRUE(PinMatches("0X00000001:0X0000D1A7", d));
  EXPECT_TRUE(PinMatches("0x10000d1a7", d));
  EXPECT_FALSE(PinMatches("0x00000000_0x0000D1A7", d));
  EXPECT_FALSE(PinMatches("0x00000001_0x0000D1A7_", d));
  EXPECT_FALSE(PinMatches("00000001_0x0000D1A7", d));
  EXPECT_FALSE(PinMatches("0x0000d1a7", d));
  EXPECT_FALSE(PinMatches("PCIROOT(0)#PCI(1F00)", d));
}

TEST(DeviceRequest, ErrorsNameTheAnnotationAndTheProblem) {
  struct Case {
    Annotations annotations;
    std::string expected;
  } cases[] = {
      {{{"dxshim.io/gpus", "1"}}, "annotation dxshim.io/gpus: unknown dxshim.io/ key"},
      {{{"dxshim.io/gpu", "0"}}, "dxshim.io/gpu='0': not a GPU count from 1 to 16"},
      {{{"dxshim.io/gpu", "17"}}, "not a GPU count from 1 to 16"},
      {{{"dxshim.io/gpu", "one"}}, "dxshim.io/gpu='one'"},
      {{{"dxshim.io/gpu", "-1"}}, "dxshim.io/gpu='-1'"},
      {{{"dxshim.io/class", "gpu"}}, "dxshim.io/class='gpu': not display or compute"},
      {{{"dxshim.io/vendor", "0x1FFFF"}}, "dxshim.io/vendor='0x1FFFF': not a PCI vendor id"},
      {{{"dxshim.io/vendor", "nv;rm -rf"}}, "not a vendor name"},
      {{{"dxshim.io/min-memory", "8GB"}},
       "dxshim.io/min-memory='8GB': not a quantity of memory such as 8Gi, 8192Mi or 1.5Gi"},
      {{{"dxshim.io/min-memory", "-8Gi"}}, "dxshim.io/min-memory='-8Gi': negative;"},
      {{{"dxshim.io/min-memory", "16777216Ti"}}, "'16777216Ti': too large: no GPU has"},
      {{{"dxshim.io/requires", "cuda,,vulkan"}}, "has an empty item"},
      {{{"dxshim.io/requires", "..\\evil.dll"}}, "is neither a file name"},
      {{{"dxshim.io/requires", "directx12"}}, "is neither a file name"},
      {{{"dxshim.io/device", "a,A"}}, "lists 'A' twice"},
      {{{"dxshim.io/device", "a"}, {"dxshim.io/gpu", "2"}}, "more GPUs than dxshim.io/device"},
      {{{"dxshim.io/sharing", "yes"}}, "dxshim.io/sharing='yes': not exclusive or shared"},
      // Found by the annotation fuzzer: 17 pins without a count made a count of 17.
      {{{"dxshim.io/device", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q"}},
       "pins 17 devices, more than 16 GPUs; set dxshim.io/gpu"},
      {{{"dxshim.io/containers", "App"}}, "'App' is not a container name"},
  };
  for (const auto& c : cases) {
    const auto msg = ErrorOf(c.annotations);
    EXPECT_NE(msg.find(c.expected), std::string::npos)
        << "annotations " << c.annotations.begin()->first << " -> '" << msg << "'";
  }
}

TEST(DeviceRequest, TheExamplePodsParse) {
  int pods = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(DXSHIM_SOURCE_DIR "/deploy/examples/pods")) {
    if (entry.path().extension() != ".yaml") continue;  // README.md, the images' Dockerfiles
    const auto pod = YAML::LoadFile(entry.path().string());
    std::map<std::string, std::string> annotations;
    for (const auto& kv : pod["metadata"]["annotations"]) {
      annotations[kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
    // A pod asks by annotation, or by a resource limit alone (then it has no dxshim.io/ one).
    bool limited = false;
    for (const auto& container : pod["spec"]["containers"]) {
      const auto resources = container["resources"];
      const auto limits = resources ? resources["limits"] : YAML::Node();
      limited = limited || (limits && (limits["dxshim.io/gpu"] || limits["dxshim.io/gpu-memory"]));
    }
    EXPECT_NO_THROW({
      const auto r = ParseDeviceRequest(annotations);
      EXPECT_TRUE(r.has_value() || limited) << entry.path();
    }) << entry.path();
    ++pods;
  }
  EXPECT_GE(pods, 3);
}

}  // namespace
}  // namespace dxshim::devices
