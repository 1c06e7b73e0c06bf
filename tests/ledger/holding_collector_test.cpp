// Which pod is on which GPU, as metrics (shim/ledger/holding_collector.h), from a real ledger over
// the example inventory of a node with three GPUs (a real file; no GPU exists here): one info
// series per (container, GPU) with windows_exporter's LUID form, each pod's reservation, nothing
// for a reservation in flight, the series gone with the pod's hold, and the same series after a
// restart rebuilds the ledger from the runtime's record.
#include "shim/ledger/holding_collector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "devices/allocation/device_request.h"
#include "devices/make_device_source.h"
#include "shim/metrics/metrics.h"
#include "tests/support/http_get.h"
#include "tests/support/ledger_reserve.h"

namespace dxshim {
namespace {

using test::Sample;

const std::string kInventory = DXSHIM_SOURCE_DIR "/deploy/examples/inventories/hetero-node.yaml";
// The first T4 of hetero-node.yaml (LUID 0xd1a2): its id, and as the text format escapes it.
const std::string kT4 = R"(PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\4&2E1C5B8A&0&00F0)";
const std::string kT4Id = R"(PCI\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\4&2E1C5B8A&0&00F0)";
constexpr std::uint64_t kGi = 1ull << 30;

devices::DeviceRequest Request(const std::map<std::string, std::string>& annotations) {
  return *devices::ParseDeviceRequest(annotations);
}

devices::AllocationPolicy Policy() {
  devices::AllocationPolicy p;
  p.max_containers_per_device = 4;
  p.spread_or_pack = devices::SpreadOrPack::kPack;
  return p;
}

class Holdings : public ::testing::Test {
 protected:
  Holdings()
      : snapshot_(devices::MakeDeviceSource("inventory:" + kInventory), {}), ledger_(Policy()) {
    ledger_.BeginResync();
    ledger_.FinishResync({});
  }

  std::string Scrape(const Ledger& ledger) {
    metrics::Metrics m;
    m.AddCollector([&] { return CollectHoldings(snapshot_, ledger); });
    return m.Render();
  }
  std::string Scrape() { return Scrape(ledger_); }

  // Creates a container of `sandbox` with `annotations`, as a successful CreateContainer does.
  void Create(const std::string& sandbox, const std::string& pod, const std::string& container,
              const std::map<std::string, std::string>& annotations) {
    const auto inventory = snapshot_.Current();
    ledger_.Commit(
        test::Reserve(ledger_, *inventory, Request(annotations), sandbox, pod, container).id);
  }

  devices::DeviceSnapshot snapshot_;
  Ledger ledger_;
};

// Lines of `text` that are samples of `name`.
int Series(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(name + "{")) ++n;
  }
  return n;
}

std::vector<std::string> Holder(const std::string& ns, const std::string& pod,
                                const std::string& container) {
  return {"namespace=\"" + ns + "\"", "pod=\"" + pod + "\"", "container=\"" + container + "\""};
}

TEST_F(Holdings, OneInfoSeriesPerContainerAndGpuWithWindowsExportersLuid) {
  const std::map<std::string, std::string> t4 = {{"dxshim.io/device", "0xd1a2"}};
  Create("sb-encoder", "media/encoder", "init", t4);
  Create("sb-encoder", "media/encoder", "app", t4);
  Create("sb-encoder", "media/encoder", "app", t4);  // a restart of the same container
  auto asked = t4;
  asked["dxshim.io/gpu-memory"] = "6Gi";
  Create("sb-trainer", "ml/trainer", "train", asked);
  const auto text = Scrape();
  EXPECT_EQ(Series(text, "dxshim_container_gpu_info"), 3) << text;
  for (const auto& holder : {Holder("media", "encoder", "init"), Holder("media", "encoder", "app"),
                             Holder("ml", "trainer", "train")}) {
    auto labels = holder;
    labels.insert(labels.end(), {"gpu=\"" + kT4 + "\"", "luid=\"0x00000000_0x0000D1A2\"",
                                 "location_path=\"PCIROOT(0)#PCI(1E00)\"", "vendor=\"NVIDIA\""});
    EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", labels), 1) << holder[1] << "\n" << text;
  }
  // Per pod, what it holds there: the default (15Gi over 4 pods, rounded as the ledger does) and
  // the 6Gi asked.
  EXPECT_EQ(Series(text, "dxshim_pod_gpu_memory_reserved_bytes"), 2);
  const double fallback = Sample(text, "dxshim_pod_gpu_memory_reserved_bytes",
                                 {"namespace=\"media\"", "pod=\"encoder\""});
  EXPECT_NEAR(fallback, 15.0 * kGi / 4, 1 << 20) << text;
  EXPECT_EQ(Sample(text, "dxshim_pod_gpu_memory_reserved_bytes",
                   {"namespace=\"ml\"", "pod=\"trainer\"", "gpu=\"" + kT4 + "\"",
                    "luid=\"0x00000000_0x0000D1A2\""}),
            6.0 * kGi);
}

TEST_F(Holdings, AnExclusivePodOnTwoGpusReservesAllOfEach) {
  Create(
      "sb-x", "default/render", "unreal",
      {{"dxshim.io/vendor", "nvidia"}, {"dxshim.io/gpu", "2"}, {"dxshim.io/sharing", "exclusive"}});
  const auto text = Scrape();
  EXPECT_EQ(Series(text, "dxshim_container_gpu_info"), 2) << text;
  EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", {"luid=\"0x00000000_0x0000D1C4\""}), 1);
  EXPECT_EQ(
      Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"luid=\"0x00000000_0x0000D1A2\""}),
      15.0 * kGi);
  EXPECT_EQ(
      Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"luid=\"0x00000000_0x0000D1C4\""}),
      15.0 * kGi);
}

TEST_F(Holdings, OnlyCommittedHoldsShowAndTheyGoWithTheSandbox) {
  const auto inventory = snapshot_.Current();
  const auto pending = test::Reserve(ledger_, *inventory, Request({{"dxshim.io/vendor", "amd"}}),
                                     "sb-a", "ns/a", "c");
  EXPECT_EQ(Series(Scrape(), "dxshim_container_gpu_info"), 0) << "in flight: not yet held";
  ledger_.Release(pending.id);
  EXPECT_EQ(Series(Scrape(), "dxshim_container_gpu_info"), 0) << "refused by the runtime";

  Create("sb-a", "ns/a", "c", {{"dxshim.io/vendor", "amd"}});
  EXPECT_EQ(Sample(Scrape(), "dxshim_container_gpu_info", Holder("ns", "a", "c")), 1);
  ledger_.SandboxGone("sb-a");
  const auto text = Scrape();
  EXPECT_EQ(Series(text, "dxshim_container_gpu_info"), 0) << text;
  EXPECT_EQ(Series(text, "dxshim_pod_gpu_memory_reserved_bytes"), 0) << text;
}

// After dxshim restarts, the ledger is rebuilt from what the runtime lists: the container names
// from its containers' metadata, the pod names from its sandboxes'.
TEST_F(Holdings, ARestartedDxshimNamesTheSameHolders) {
  RuntimeRecord record;
  record.ready_sandboxes = {"sb-1"};
  record.pod_names = {{"sb-1", "media/encoder"}};
  RecordedContainer c;
  c.container_id = "c1";
  c.sandbox_id = "sb-1";
  c.name = "app";
  c.device_ids = {kT4Id};
  c.memory = {2 * kGi};
  record.containers.push_back(c);
  c.container_id = "c0";
  c.name = "init";
  c.exited = true;  // an init container that completed: its pod still holds the GPU
  record.containers.push_back(c);
  Ledger restarted(Policy());
  restarted.BeginResync();
  restarted.FinishResync(record);
  const auto text = Scrape(restarted);
  EXPECT_EQ(Series(text, "dxshim_container_gpu_info"), 2) << text;
  EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", Holder("media", "encoder", "app")), 1);
  EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", Holder("media", "encoder", "init")), 1);
  EXPECT_EQ(Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"pod=\"encoder\""}), 2.0 * kGi);
}

}  // namespace
}  // namespace dxshim
