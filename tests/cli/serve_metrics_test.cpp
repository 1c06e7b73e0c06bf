// serve's metrics as `dxshim serve` wires them (shim/cli/serve_metrics.h): docs/metrics.md's
// metric table is exactly the families a scrape carries, every part's series and both collectors
// over a real ledger and the example inventory (a real file; no GPU exists here).
#include "shim/cli/serve_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "devices/allocation/device_request.h"
#include "devices/make_device_source.h"

namespace dxshim {
namespace {

// The metric names in the first column of docs/metrics.md's table ("| metric | type | ...").
std::set<std::string> DocumentedMetrics() {
  std::ifstream in(DXSHIM_SOURCE_DIR "/docs/metrics.md");
  std::set<std::string> names;
  bool in_table = false;
  const std::regex name("`(dxshim_[a-z0-9_]+)`");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("| metric | type |")) in_table = true;
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    const auto first = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator m(first.begin(), first.end(), name), end; m != end; ++m) {
      names.insert((*m)[1].str());
    }
  }
  return names;
}

TEST(ServeMetrics, TheMetricsReferenceIsWhatAScrapeCarries) {
  devices::DeviceSnapshot snapshot(
      devices::MakeDeviceSource("inventory:" DXSHIM_SOURCE_DIR
                                "/deploy/examples/inventories/hetero-node.yaml"),
      {});
  devices::AllocationPolicy policy;
  policy.max_containers_per_device = 2;
  Ledger ledger(policy);
  ledger.BeginResync();
  ledger.FinishResync({});
  const auto placed =
      devices::Choose(*snapshot.Current(), ledger.Usage(),
                      devices::ParseDeviceRequest({{"dxshim.io/vendor", "amd"}}).value(), policy);
  ledger.Commit(ledger.Hold(placed, "sb-1", "ns/a", "c").value());
  ServeMetrics m;
  m.CollectNode(snapshot, ledger);
  // One event of each kind, so that every family has a sample.
  m.relay.CallAnswered("/runtime.v1.RuntimeService/Version", grpc::StatusCode::OK,
                       std::chrono::microseconds(70));
  m.relay.PipeClient("kubelet.exe");
  m.resyncs.Resync(true, std::chrono::milliseconds(3));
  m.decisions.Count(DecisionOutcome::kInjected);
  std::set<std::string> scraped;
  std::istringstream lines(m.registry.Render());
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# TYPE ")) scraped.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  ASSERT_GT(scraped.size(), 20u);
  EXPECT_EQ(DocumentedMetrics(), scraped)
      << "docs/metrics.md's table must list exactly the metrics dxshim serves";
}

}  // namespace
}  // namespace dxshim
