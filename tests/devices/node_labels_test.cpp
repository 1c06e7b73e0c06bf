// Node labels from the node's GPUs: golden files for the example inventories, and Kubernetes'
// label syntax for every key and value, whatever the inventory says.
#include "devices/node_labels.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "devices/device_table.h"
#include "devices/inventory_file.h"
#include "tests/support/read_file.h"

namespace dxshim::devices {
namespace {

const std::string kInventories = DXSHIM_SOURCE_DIR "/deploy/examples/inventories";
const std::string kGolden = DXSHIM_SOURCE_DIR "/tests/golden/labels";

void ExpectValidSyntax(const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : labels) {
    EXPECT_TRUE(IsLabelKey(key)) << key;
    EXPECT_TRUE(IsLabelValue(value)) << key << "=" << value;
    EXPECT_TRUE(key.starts_with("dxshim.io/")) << key;
  }
}

TEST(NodeLabels, ExampleInventoriesMatchTheirGoldenFiles) {
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kInventories)) {
    const auto name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const auto devices = SelectUsable(LoadInventoryFile(entry.path().string()), false, false);
    const auto labels = NodeLabels(devices);
    ExpectValidSyntax(labels);
    EXPECT_EQ(FormatLabelLines(labels), test::ReadFile(kGolden + "/" + name + ".labels"));
    ++checked;
  }
  EXPECT_GE(checked, 5u);
}

TEST(NodeLabels, SayWhatTheSchedulerNeeds) {
  const auto devices =
      SelectUsable(LoadInventoryFile(kInventories + "/hetero-node.yaml"), false, false);
  const auto labels = NodeLabels(devices);
  EXPECT_EQ(labels.at("dxshim.io/gpu.present"), "true");
  EXPECT_EQ(labels.at("dxshim.io/gpu.count"), std::to_string(devices.size()));
  EXPECT_EQ(labels.at("dxshim.io/gpu.vendor.nvidia"), "true");
  EXPECT_EQ(labels.at("dxshim.io/gpu.vendor.amd"), "true");
  EXPECT_EQ(labels.at("dxshim.io/gpu.api.cuda"), "true");
  std::uint64_t largest = 0;
  for (const auto& d : devices) largest = std::max(largest, d.dedicated_memory);
  EXPECT_EQ(labels.at("dxshim.io/gpu.memory-mib"), std::to_string(largest >> 20));
  EXPECT_EQ(FormatLabelList({{"a/b", "1"}, {"c/d", "x"}}), "a/b=1,c/d=x");
}

TEST(NodeLabels, NoGpuAndAbsentGpusSayNotPresent) {
  EXPECT_EQ(FormatLabelLines(NodeLabels({})), "dxshim.io/gpu.present=false\n");
  Device absent;
  absent.vendor = "NVIDIA";
  absent.present = false;
  EXPECT_EQ(NodeLabels({absent}).count("dxshim.io/gpu.vendor.nvidia"), 0u);
}

TEST(NodeLabels, HostileVendorNamesStillMakeValidKeys) {
  for (const char* vendor :
       {"ACME GPU Corp. (TM)", "", "---", "Ünïcode", "a/b=c,d",
        "a-very-long-vendor-name-that-goes-on-and-on-beyond-sixty-three-chars"}) {
    Device d;
    d.vendor = vendor;
    d.vendor_id = 0x1234;
    d.dedicated_memory = 1ull << 30;
    SCOPED_TRACE(vendor);
    ExpectValidSyntax(NodeLabels({d}));
  }
}

TEST(NodeLabels, LabelSyntaxRules) {
  for (const char* ok : {"", "true", "16384", "a", "a.b-c_d", "A1"}) {
    EXPECT_TRUE(IsLabelValue(ok)) << ok;
  }
  for (const char* bad : {"-a", "a-", ".a", "a b", "a,b", "a=b", "a/b",
                          "0123456789012345678901234567890123456789012345678901234567890123"}) {
    EXPECT_FALSE(IsLabelValue(bad)) << bad;
  }
  for (const char* ok : {"dxshim.io/gpu.count", "gpu", "a.b.c/x_y", "x-y.example.com/Name"}) {
    EXPECT_TRUE(IsLabelKey(ok)) << ok;
  }
  for (const char* bad : {"", "/gpu", "dxshim.io/", "Dxshim.io/gpu", "dxshim..io/gpu",
                          "-dxshim.io/gpu", "dxshim.io/gpu/x", "dxshim.io/-gpu"}) {
    EXPECT_FALSE(IsLabelKey(bad)) << bad;
  }
}

}  // namespace
}  // namespace dxshim::devices
