// The node's GPUs as metrics (shim/ledger/node_collector.h), scraped through a real registry and
// prometheus-cpp's text format from a real device snapshot and a real ledger: every series the
// collector exports, per GPU (slots, pods, exclusive, memory, reserved, present, with the gpu,
// vendor, model and luid labels) and for the node (GPUs, source, the snapshot's loads, failures
// and generation, the ledger's first read); a GPU that left the snapshot while held, listed with
// present 0 until its pod lets go; and what keeps the node from being ready (NotReady). Only
// what cannot exist here is made up: Windows' GPUs, through a device source of the test's own.
#include "shim/ledger/node_collector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devices/allocation/device_request.h"
#include "shim/metrics/metrics.h"
#include "tests/support/http_get.h"
#include "tests/support/ledger_reserve.h"

namespace dxshim {
namespace {

using test::Sample;

constexpr std::uint64_t kGi = 1ull << 30;

// The GPUs the made-up source gives, whether it has changed since the snapshot last asked, and
// whether reading it fails.
struct MadeUpNode {
  std::vector<devices::Device> gpus;
  bool changed = false;
  bool unreadable = false;
};

// Stands in for DXCore and the registry (or an inventory file): Windows GPUs do not exist here.
class MadeUpGpus final : public devices::DeviceSource {
 public:
  explicit MadeUpGpus(std::shared_ptr<MadeUpNode> node) : node_(std::move(node)) {}
  std::string Name() const override { return "made-up"; }
  bool Changed() override { return std::exchange(node_->changed, false); }
  std::vector<devices::Device> Load() override {
    if (node_->unreadable) throw std::runtime_error("made-up source unreadable");
    return node_->gpus;
  }

 private:
  std::shared_ptr<MadeUpNode> node_;
};

devices::Device Gpu(std::string id, std::uint64_t luid, std::string vendor, std::string description,
                    std::uint64_t memory) {
  devices::Device d;
  d.id = std::move(id);
  d.luid = luid;
  d.vendor = std::move(vendor);
  d.description = std::move(description);
  d.location_path = "PCIROOT(0)#PCI(" + std::to_string(luid & 0xff) + ")";
  d.dedicated_memory = memory;
  d.driver_store = R"(C:\Windows\System32\DriverStore\FileRepository\made_up.inf_amd64_0)";
  return d;
}

// Two GPUs of two vendors; the AMD one's LUID has a high part, so that its label shows both.
const devices::Device kNvidia = Gpu(R"(PCI\VEN_10DE&DEV_2531&SUBSYS_151D10DE&REV_A1\4&1&0&0008)",
                                    0xd1a2, "NVIDIA", "NVIDIA RTX A2000 12GB", 12 * kGi);
const devices::Device kAmd = Gpu(R"(PCI\VEN_1002&DEV_7362&SUBSYS_0A341002&REV_C3\4&2&0&00E0)",
                                 0x1'0000e03c, "AMD", "AMD Radeon Pro V520 MxGPU", 8 * kGi);

// `id` as the text format writes a label value (backslashes doubled).
std::string Escaped(const std::string& id) {
  std::string out;
  for (const char c : id) {
    if (c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The labels of a GPU's series: those of `d` when in the snapshot, only its id when it left.
std::vector<std::string> Labels(const devices::Device& d, bool in_snapshot = true) {
  if (!in_snapshot) {
    return {"gpu=\"" + Escaped(d.id) + "\"", "vendor=\"\"", "model=\"\"", "luid=\"\""};
  }
  return {"gpu=\"" + Escaped(d.id) + "\"", "vendor=\"" + d.vendor + "\"",
          "model=\"" + d.description + "\"", "luid=\"" + devices::FormatLuid(d.luid) + "\""};
}

devices::AllocationPolicy Policy() {
  devices::AllocationPolicy p;
  p.max_containers_per_device = 3;
  p.gpu_memory_reserved = 1 * kGi;
  return p;
}

class NodeCollector : public ::testing::Test {
 protected:
  NodeCollector()
      : node_(std::make_shared<MadeUpNode>(MadeUpNode{{kNvidia, kAmd}})),
        snapshot_(std::make_unique<MadeUpGpus>(node_), {}),
        ledger_(Policy()) {}

  void Sync() {
    ledger_.BeginResync();
    ledger_.FinishResync({});
  }

  // A pod of `sandbox` holding what `annotations` ask, as a successful CreateContainer leaves it.
  void Hold(const std::string& sandbox, const std::map<std::string, std::string>& annotations) {
    const auto request = devices::ParseDeviceRequest(annotations);
    ASSERT_TRUE(request.has_value());
    ledger_.Commit(test::Reserve(ledger_, *snapshot_.Current(), *request, sandbox).id);
  }

  // One scrape, as /metrics renders it.
  std::string Scrape() {
    metrics::Metrics registry;
    registry.AddCollector([&] { return CollectNode(snapshot_, ledger_); });
    return registry.Render();
  }

  std::shared_ptr<MadeUpNode> node_;
  devices::DeviceSnapshot snapshot_;
  Ledger ledger_;
};

// Each family in `text` by its TYPE line: name -> "gauge" / "counter".
std::map<std::string, std::string> Types(const std::string& text) {
  std::map<std::string, std::string> types;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("# TYPE ")) continue;
    const auto space = line.find(' ', 7);
    types[line.substr(7, space - 7)] = line.substr(space + 1);
  }
  return types;
}

// Samples of `name` (lines "name{...} value" or "name value").
int Series(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(name + "{") || line.starts_with(name + " ")) ++n;
  }
  return n;
}

TEST_F(NodeCollector, ExportsExactlyTheseFamiliesWithTheirTypes) {
  Sync();
  const std::map<std::string, std::string> expected = {
      {"dxshim_gpu_pod_slots", "gauge"},
      {"dxshim_gpu_pods", "gauge"},
      {"dxshim_gpu_exclusive", "gauge"},
      {"dxshim_gpu_memory_bytes", "gauge"},
      {"dxshim_gpu_memory_reserved_bytes", "gauge"},
      {"dxshim_gpu_present", "gauge"},
      {"dxshim_gpus", "gauge"},
      {"dxshim_device_source_info", "gauge"},
      {"dxshim_device_snapshot_loads_total", "counter"},
      {"dxshim_device_snapshot_load_failures_total", "counter"},
      {"dxshim_device_snapshot_generation", "gauge"},
      {"dxshim_ledger_synced", "gauge"},
  };
  const auto text = Scrape();
  EXPECT_EQ(Types(text), expected) << text;
  for (const auto* per_gpu :
       {"dxshim_gpu_pod_slots", "dxshim_gpu_pods", "dxshim_gpu_exclusive",
        "dxshim_gpu_memory_bytes", "dxshim_gpu_memory_reserved_bytes", "dxshim_gpu_present"}) {
    EXPECT_EQ(Series(text, per_gpu), 2) << per_gpu << ": one series per GPU\n" << text;
  }
}

TEST_F(NodeCollector, EachGpuWhatItMayTakeWhoHoldsItAndWhatTheyReserved) {
  Sync();
  // Two shared pods on the NVIDIA GPU (one asks 2Gi, one the default: 11Gi / 3), and one pod
  // holding the AMD GPU exclusively.
  Hold("sb-asks", {{"dxshim.io/device", "0xd1a2"}, {"dxshim.io/gpu-memory", "2Gi"}});
  Hold("sb-default", {{"dxshim.io/device", "0xd1a2"}});
  Hold("sb-whole", {{"dxshim.io/vendor", "amd"}, {"dxshim.io/sharing", "exclusive"}});
  const auto text = Scrape();

  const auto nvidia = Labels(kNvidia);
  EXPECT_EQ(nvidia[3], "luid=\"0x00000000_0x0000D1A2\"");
  EXPECT_EQ(Sample(text, "dxshim_gpu_pod_slots", nvidia), 3) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_pods", nvidia), 2) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_exclusive", nvidia), 0) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_memory_bytes", nvidia), 11.0 * kGi) << text;
  EXPECT_NEAR(Sample(text, "dxshim_gpu_memory_reserved_bytes", nvidia), 2.0 * kGi + 11.0 * kGi / 3,
              1 << 20)
      << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_present", nvidia), 1) << text;

  const auto amd = Labels(kAmd);
  EXPECT_EQ(amd[3], "luid=\"0x00000001_0x0000E03C\"");
  EXPECT_EQ(Sample(text, "dxshim_gpu_pod_slots", amd), 1) << "held exclusively\n" << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_pods", amd), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_exclusive", amd), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_memory_bytes", amd), 7.0 * kGi) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_memory_reserved_bytes", amd), 7.0 * kGi) << "all of it";
  EXPECT_EQ(Sample(text, "dxshim_gpu_present", amd), 1) << text;

  // The node.
  EXPECT_EQ(Sample(text, "dxshim_gpus"), 2) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_source_info", {"source=\"made-up\""}), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_loads_total"), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_load_failures_total"), 0) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_generation"), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_ledger_synced"), 1) << text;

  // Once the pods let go, each GPU is free again: its slots, no pod, nothing reserved.
  for (const auto* sandbox : {"sb-asks", "sb-default", "sb-whole"}) ledger_.SandboxGone(sandbox);
  const auto after = Scrape();
  for (const auto& labels : {nvidia, amd}) {
    EXPECT_EQ(Sample(after, "dxshim_gpu_pod_slots", labels), 3) << after;
    EXPECT_EQ(Sample(after, "dxshim_gpu_pods", labels), 0) << after;
    EXPECT_EQ(Sample(after, "dxshim_gpu_exclusive", labels), 0) << after;
    EXPECT_EQ(Sample(after, "dxshim_gpu_memory_reserved_bytes", labels), 0) << after;
  }
}

TEST_F(NodeCollector, AGpuThatLeftWhileHeldStaysListedAsNotPresentUntilItsPodLetsGo) {
  Sync();
  Hold("sb-whole", {{"dxshim.io/vendor", "amd"}, {"dxshim.io/sharing", "exclusive"}});
  node_->gpus = {kNvidia};  // a driver update took the AMD GPU away
  node_->changed = true;
  ASSERT_TRUE(snapshot_.Refresh());
  auto text = Scrape();
  EXPECT_EQ(Sample(text, "dxshim_gpus"), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_loads_total"), 2) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_generation"), 2) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_present", Labels(kNvidia)), 1) << text;
  const auto gone = Labels(kAmd, false);
  EXPECT_EQ(Sample(text, "dxshim_gpu_present", gone), 0) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_pods", gone), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpu_exclusive", gone), 1) << text;
  EXPECT_EQ(Series(text, "dxshim_gpu_present"), 2) << text;

  // A source that cannot be read keeps the GPUs it gave, and counts the failure.
  node_->unreadable = true;
  node_->changed = true;
  EXPECT_FALSE(snapshot_.Refresh());
  text = Scrape();
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_load_failures_total"), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_loads_total"), 2) << text;
  EXPECT_EQ(Sample(text, "dxshim_gpus"), 1) << text;

  ledger_.SandboxGone("sb-whole");
  text = Scrape();
  EXPECT_EQ(Series(text, "dxshim_gpu_present"), 1) << "gone with its pod\n" << text;
  EXPECT_TRUE(std::isnan(Sample(text, "dxshim_gpu_present", gone))) << text;
}

TEST_F(NodeCollector, NotReadyUntilTheRuntimeTheLedgerAndTheDevicesAreThere) {
  EXPECT_EQ(Sample(Scrape(), "dxshim_ledger_synced"), 0);
  EXPECT_EQ(NotReady(false, snapshot_, ledger_),
            (std::vector<std::string>{
                "runtime: not connected",
                "ledger: not yet read from the runtime (GPU requests wait for it)"}));
  Sync();
  EXPECT_EQ(Sample(Scrape(), "dxshim_ledger_synced"), 1);
  EXPECT_EQ(NotReady(false, snapshot_, ledger_),
            std::vector<std::string>{"runtime: not connected"});
  EXPECT_TRUE(NotReady(true, snapshot_, ledger_).empty());

  // A source unreadable from the start (tolerated): no GPU, and not ready for it.
  auto unreadable = std::make_shared<MadeUpNode>(MadeUpNode{{kNvidia}, false, true});
  devices::SnapshotOptions tolerant;
  tolerant.tolerate_initial_failure = true;
  devices::DeviceSnapshot never_read(std::make_unique<MadeUpGpus>(unreadable), tolerant);
  EXPECT_EQ(NotReady(true, never_read, ledger_),
            std::vector<std::string>{"devices: made-up has not been read successfully"});
  const auto text = [&] {
    metrics::Metrics registry;
    registry.AddCollector([&] { return CollectNode(never_read, ledger_); });
    return registry.Render();
  }();
  EXPECT_EQ(Sample(text, "dxshim_gpus"), 0) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_loads_total"), 0) << text;
  EXPECT_EQ(Sample(text, "dxshim_device_snapshot_load_failures_total"), 1) << text;
  EXPECT_EQ(Series(text, "dxshim_gpu_present"), 0) << text;
}

}  // namespace
}  // namespace dxshim
