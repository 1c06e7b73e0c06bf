// Inventory files (devices/inventory_file.h): the examples load with their real runtime files and
// round-trip through YAML and JSON, and a bad file is refused naming the file, line and field.
#include "devices/inventory_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "shim/base/utf8_text.h"

namespace dxshim::devices {
namespace {

const std::string kInventories = DXSHIM_SOURCE_DIR "/deploy/examples/inventories";

TEST(Inventory, NvidiaT4ExampleHasTheRealRuntimeFiles) {
  const auto devices = LoadInventoryFile(kInventories + "/nvidia-t4.yaml");
  ASSERT_EQ(devices.size(), 1u);
  const auto& t4 = devices[0];
  EXPECT_EQ(t4.vendor_id, 0x10de);
  EXPECT_EQ(t4.device_class, DeviceClass::kDisplay);
  EXPECT_EQ(t4.dedicated_memory, 15ull << 30);
  EXPECT_EQ(t4.location_path, "PCIROOT(0)#PCI(1E00)");
  const std::vector<RuntimeFile> system32 = {{"nvcudadebugger.dll", "nvcudadebugger.dll"},
                                             {"nvcuda_loader64.dll", "nvcuda.dll"},
                                             {"nvcuvid64.dll", "nvcuvid.dll"},
                                             {"nvEncodeAPI64.dll", "nvEncodeAPI64.dll"},
                                             {"nvapi64.dll", "nvapi64.dll"},
                                             {"nvml_loader.dll", "nvml.dll"},
                                             {"OpenCL64.dll", "OpenCL.dll"},
                                             {"vulkan-1-x64.dll", "vulkan-1.dll"}};
  const std::vector<RuntimeFile> syswow64 = {
      {"nvcuda_loader32.dll", "nvcuda.dll"},  {"nvcuvid32.dll", "nvcuvid.dll"},
      {"nvEncodeAPI.dll", "nvEncodeAPI.dll"}, {"nvapi.dll", "nvapi.dll"},
      {"OpenCL32.dll", "OpenCL.dll"},         {"vulkan-1-x86.dll", "vulkan-1.dll"}};
  EXPECT_EQ(t4.system32, system32);
  EXPECT_EQ(t4.syswow64, syswow64);
}

TEST(Inventory, EveryExampleRoundTripsThroughYamlAndJson) {
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kInventories)) {
    SCOPED_TRACE(entry.path().string());
    const auto devices = LoadInventoryFile(entry.path());
    EXPECT_FALSE(devices.empty());
    EXPECT_EQ(ParseInventory(WriteInventoryYaml(devices), "yaml"), devices);
    EXPECT_EQ(ParseInventory(WriteInventoryJson(devices), "json"), devices);
    ++examples;
  }
  EXPECT_EQ(examples, 5);
  const auto hetero = LoadInventoryFile(kInventories + "/hetero-node.yaml");
  EXPECT_EQ(hetero.size(), 3u);
  EXPECT_EQ(LoadInventoryFile(kInventories + "/mcdm-compute.yaml")[0].device_class,
            DeviceClass::kCompute);
  EXPECT_TRUE(LoadInventoryFile(kInventories + "/intel-igpu.yaml")[0].integrated);
  EXPECT_EQ(hetero[1].uuid, "GPU-1a2b3c4d-6e7f-4a8b-9c0d-e1f2a3b4c5d6");
  EXPECT_EQ(hetero[2].uuid, "");  // the AMD GPU: none
}

TEST(Inventory, NvmlGpuUuidForm) {
  EXPECT_TRUE(IsNvmlGpuUuid("GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e"));
  for (const char* bad :
       {"", "GPU-", "gpu-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e",
        "GPU-8D3B2C1E-5F6A-4B7C-9D8E-0F1A2B3C4D5E",  // NVML writes lower case
        "GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e0", "GPU-8d3b2c1e5f6a-4b7c-9d8e-0f1a2b3c4d5e-",
        "GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5 "}) {
    EXPECT_FALSE(IsNvmlGpuUuid(bad)) << bad;
  }
}

std::string ErrorOf(const std::string& yaml) {
  try {
    ParseInventory(yaml, "test.yaml");
  } catch (const InventoryError& e) {
    return e.what();
  }
  return "(accepted)";
}

constexpr const char* kValid = R"(devices:
  - id: gpu0
    locationPath: 'PCIROOT(0)#PCI(0100)'
    vendorId: 0x10de
    class: display
    driverStore: 'C:\DriverStore\nv'
    runtimeFiles:
      system32:
        - {source: nvapi64.dll}
)";

TEST(Inventory, ErrorsNameFileLineAndField) {
  EXPECT_EQ(ErrorOf(kValid), "(accepted)");
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {"    class: display", "    class: display\n    colour: green",
       "line 6: devices[0].colour: unknown key"},
      {"vendorId: 0x10de", "vendorId: nvidia",
       "line 4: devices[0].vendorId: 'nvidia' is not a number"},
      {"vendorId: 0x10de", "vendorId: 0x10000", "devices[0].vendorId: '0x10000' is too large"},
      {"    class: display", "    class: gpu",
       "line 5: devices[0].class: 'gpu' is not display or compute"},
      {"locationPath: 'PCIROOT(0)#PCI(0100)'", "locationPath: ''",
       "line 3: devices[0].locationPath: is empty"},
      {"  - id: gpu0\n    locationPath", "  - locationPath", "devices[0].id: is required"},
      {"{source: nvapi64.dll}", "{source: '..\\..\\evil.dll'}",
       "line 9: devices[0].runtimeFiles.system32[0]: source '..\\..\\evil.dll' contains '..'"},
      {"{source: nvapi64.dll}", "{source: 'C:\\evil.dll'}", "has a drive letter"},
      {"{source: nvapi64.dll}", "{source: nvapi64.dll, destination: '..\\x.dll'}",
       "destination '..\\x.dll' contains '\\'"},
      {"{source: nvapi64.dll}",
       "{source: nvapi64.dll}\n        - {source: b.dll, destination: NVAPI64.DLL}",
       "system32[1]: destination 'NVAPI64.DLL' is listed twice"},
      {"    driverStore: 'C:\\DriverStore\\nv'\n", "", "devices[0].driverStore: is required when"},
      {"    class: display", "    class: display\n    integrated: maybe",
       "devices[0].integrated: must be true or false"},
      {"devices:", "devices: 3\nother:", "unknown key"},
      {"id: gpu0", "id: \"gpu\\x01\"", "devices[0].id: contains a control character"},
      {"id: gpu0", "id: gpu\xc4\xc4", "devices[0].id: is not valid UTF-8"},
      {"id: gpu0", "id: gpu\xe2\x82", "devices[0].id: is not valid UTF-8"},
      {"    class: display", "    class: display\n    luid: 00000000_0x0000D1A2",
       "line 6: devices[0].luid: '00000000_0x0000D1A2' is not a LUID (0xHHHHHHHH_0xLLLLLLLL, e.g. "
       "0x00000000_0x0000D1A2): the high part has no 0x"},
      {"    class: display", "    class: display\n    luid: 0x00000000_0x00000D1A2",
       "devices[0].luid: '0x00000000_0x00000D1A2' is not a LUID (0xHHHHHHHH_0xLLLLLLLL, e.g. "
       "0x00000000_0x0000D1A2): the low part has 9 hex digits, more than 8"},
      {"    class: display", "    class: display\n    luid: 0x00000000_0xD1A2_",
       "devices[0].luid: '0x00000000_0xD1A2_' is not a LUID"},
      {"    class: display", "    class: display\n    luid: gpu",
       "devices[0].luid: 'gpu' is not a LUID (0xHHHHHHHH_0xLLLLLLLL, e.g. 0x00000000_0x0000D1A2): "
       "the number has no 0x"},
      {"    class: display", "    class: display\n    luid: [1, 2]",
       "devices[0].luid: must be a LUID"},
      {"    class: display", "    class: display\n    uuid: 8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e",
       "line 6: devices[0].uuid: '8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e' is not an NVML GPU UUID"},
      {"    class: display",
       "    class: display\n    uuid: GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5",
       "line 6: devices[0].uuid: 'GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5' is not an NVML"},
      {"    class: display",
       "    class: display\n    uuid: MIG-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e",
       "devices[0].uuid: 'MIG-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5e' is not an NVML GPU UUID"},
      {"    class: display",
       "    class: display\n    uuid: GPU-8d3b2c1e-5f6a-4b7c-9d8e-0f1a2b3c4d5g",
       "is not an NVML GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, lower-case hex)"},
  };
  for (const auto& c : cases) {
    std::string yaml = kValid;
    const auto at = yaml.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    yaml.replace(at, c.from.size(), c.to);
    const auto error = ErrorOf(yaml);
    EXPECT_NE(error.find("inventory test.yaml"), std::string::npos) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected: " << c.expected << "\n     got: " << error;
  }
}

// The LUID as dxshim writes it, as it wrote it before (one number, and 0xHIGH:0xLOW), any case,
// and as a decimal number, as inventories were read before.
TEST(Inventory, LuidInEverySpellingDxshimReads) {
  for (const char* luid :
       {"0x00000001_0x0000D1A2", "0x00000001_0x0000d1a2", "0x00000001:0x0000d1a2",
        "0X00000001:0X0000D1A2", "0x000000010000d1a2", "0x10000D1A2", "4295020962"}) {
    std::string yaml = kValid;
    yaml.replace(yaml.find("    class: display"), 18,
                 std::string("    class: display\n    luid: ") + luid);
    EXPECT_EQ(ParseInventory(yaml, "t")[0].luid, 0x1'0000d1a2u) << luid;
  }
  Device d;
  d.id = "gpu0";
  d.luid = 0x1'0000d1a2u;
  d.location_path = "PCIROOT(0)#PCI(0100)";
  d.vendor_id = 0x10de;
  EXPECT_NE(WriteInventoryYaml({d}).find("luid: 0x00000001_0x0000D1A2\n"), std::string::npos)
      << WriteInventoryYaml({d});
  EXPECT_NE(WriteInventoryJson({d}).find("\"luid\": \"0x00000001_0x0000D1A2\""), std::string::npos)
      << WriteInventoryJson({d});
}

TEST(Inventory, TextIsUtf8) {
  std::string yaml = kValid;
  yaml.replace(yaml.find("id: gpu0"), 8, "id: \"gr\\xe4fik-\u00fc\"");  // escapes YAML decodes
  EXPECT_EQ(ErrorOf(yaml), "(accepted)");
  EXPECT_EQ(ParseInventory(yaml, "t")[0].id,
            "gr\xc3\xa4"
            "fik-\xc3\xbc");
}

// A DriverStore folder with non-ASCII characters (a driver package named in Spanish, Euro and
// Chinese characters) loads as the same UTF-8 bytes, and writes back unchanged as YAML and JSON.
TEST(Inventory, NonAsciiDriverStoreKeepsItsUtf8Bytes) {
  const std::string store =
      "C:\\Windows\\System32\\DriverStore\\FileRepository\\nvmiig.inf_amd64_"
      "\xc3\xb1\xe2\x82\xac\xe6\xbc\xa2";  // ñ€漢
  std::string yaml = kValid;
  yaml.replace(yaml.find("C:\\DriverStore\\nv"), 17, store);
  yaml.replace(yaml.find("{source: nvapi64.dll}"), 21,
               "{source: 'nvapi64_\xc3\xb1.dll', destination: '\xe6\xbc\xa2.dll'}");
  const auto devices = ParseInventory(yaml, "t");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].driver_store, store);
  ASSERT_EQ(devices[0].system32.size(), 1u);
  EXPECT_EQ(devices[0].system32[0].source, "nvapi64_\xc3\xb1.dll");
  EXPECT_EQ(devices[0].system32[0].destination, "\xe6\xbc\xa2.dll");
  EXPECT_EQ(ParseInventory(WriteInventoryYaml(devices), "yaml"), devices);
  EXPECT_EQ(ParseInventory(WriteInventoryJson(devices), "json"), devices);
}

// Bytes that are not UTF-8 could never reach a CRI request (containerd 2.2 and kubelet 1.34
// refuse such strings): the file is refused at load, naming the line, the field and the byte, in
// a message that is valid UTF-8 itself. yaml-cpp passes such bytes through, and refuses a \u
// escape of a surrogate itself.
TEST(Inventory, TextThatIsNotUtf8IsRefusedAtLoad) {
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {"driverStore: 'C:\\DriverStore\\nv'", "driverStore: 'C:\\DriverStore\\nv\xff'",
       "line 6: devices[0].driverStore: is not valid UTF-8 (byte 0xFF at offset 17 of "
       "'C:\\DriverStore\\nv\\xFF')"},
      {"driverStore: 'C:\\DriverStore\\nv'", "driverStore: 'C:\\DriverStore\\nv\xe9'",
       "devices[0].driverStore: is not valid UTF-8 (byte 0xE9 at offset 17"},  // Latin-1 é
      {"{source: nvapi64.dll}", "{source: 'nv\xed\xa0\x80.dll'}",
       "line 9: devices[0].runtimeFiles.system32[0].source: is not valid UTF-8 (byte 0xED at "
       "offset 2 of 'nv\\xED\\xA0\\x80.dll')"},
      {"{source: nvapi64.dll}", "{source: nvapi64.dll, destination: 'a\xc0\xaf.dll'}",
       "devices[0].runtimeFiles.system32[0].destination: is not valid UTF-8 (byte 0xC0 at "
       "offset 1"},
      {"    class: display", "    class: display\n    description: 'T4 \xf4\x90\x80\x80'",
       "line 6: devices[0].description: is not valid UTF-8 (byte 0xF4 at offset 3"},
      {"locationPath: 'PCIROOT(0)#PCI(0100)'", "locationPath: 'PCIROOT(0)#PCI(0100\xe6\xbc'",
       "devices[0].locationPath: is not valid UTF-8 (byte 0xE6 at offset 19"},
      {"    class: display", "    class: display\n    colo\xffr: green",
       "devices[0].colo\\xFFr: unknown key"},
      {"    class: display", "    class: display\n    description: \"\\ud800\"", "invalid YAML"},
  };
  for (const auto& c : cases) {
    std::string yaml = kValid;
    const auto at = yaml.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    yaml.replace(at, c.from.size(), c.to);
    const auto error = ErrorOf(yaml);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected: " << c.expected << "\n     got: " << error;
    EXPECT_TRUE(IsValidUtf8(error)) << error;
  }
  // JSON is read by the same reader.
  const auto json = std::string(
      "{\"devices\": [{\"id\": \"gpu0\", \"locationPath\": \"PCIROOT(0)#PCI(0100)\", "
      "\"vendorId\": \"0x10de\", \"class\": \"display\", \"driverStore\": \"C:\\\\nv\xc3\"}]}");
  EXPECT_NE(ErrorOf(json).find("devices[0].driverStore: is not valid UTF-8 (byte 0xC3 at "
                               "offset 5 of 'C:\\nv\\xC3')"),
            std::string::npos)
      << ErrorOf(json);
}

TEST(Inventory, DuplicatesAreRefused) {
  std::string yaml = kValid;
  yaml += R"(  - id: gpu0
    locationPath: 'PCIROOT(0)#PCI(0200)'
    vendorId: 0x10de
    class: display
)";
  EXPECT_NE(ErrorOf(yaml).find("line 10: devices[1].id: duplicate id gpu0"), std::string::npos)
      << ErrorOf(yaml);
  yaml = kValid;
  yaml += R"(  - id: gpu1
    locationPath: 'pciroot(0)#pci(0100)'
    vendorId: 0x10de
    class: display
)";
  EXPECT_NE(ErrorOf(yaml).find("devices[1].locationPath: duplicate location path"),
            std::string::npos)
      << ErrorOf(yaml);
}

TEST(Inventory, BadFiles) {
  EXPECT_NE(ErrorOf("devices: [unclosed").find("invalid YAML"), std::string::npos);
  EXPECT_NE(ErrorOf("- a list").find("must be a mapping"), std::string::npos);
  EXPECT_THROW(LoadInventoryFile("/nonexistent/inventory.yaml"), InventoryError);
}

}  // namespace
}  // namespace dxshim::devices
