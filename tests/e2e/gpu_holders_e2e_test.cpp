// Which pod is on which GPU, end to end: dxshim in front of a real containerd (linux target, one
// test GPU shared by up to 4 pods) names each container it gave the GPU in
// dxshim_container_gpu_info, with the GPU's LUID as windows_exporter writes it; the series comes
// back after dxshim is killed with SIGKILL (read from containerd's record of the pod and the
// container), and goes when the pod stops. A real Prometheus (Debian's) scrapes dxshim and a
// static file in windows_exporter's text format served next to it, evaluates the recording rules
// of deploy/monitoring/, and puts the pod's name on the GPU's utilisation. windows_exporter itself
// cannot run here (it is a Windows program reading Windows performance counters), so the test
// writes what its gpu collector would say about the test GPU: the series names and labels of
// internal/collector/gpu/gpu.go (commit 589ec15d), the engine's running time growing at 0.5 s/s.
// The Grafana dashboard's tables are computed from that Prometheus with Grafana's own code
// (tests/monitoring/dashboard_tables.mjs): one row per GPU, and one per container holding one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <tuple>

#include "tests/support/gpu_node.h"
#include "tests/support/http_get.h"
#include "tests/support/process.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

// The test GPU's LUID in the inventory (test_gpu.cpp: 0x...e2e20), as windows_exporter labels it.
constexpr const char* kLuid = "0x00000000_0x000E2E20";

class GpuHolders : public GpuNodeTest {
 protected:
  void Start() {
    StartDxshim(4, {"--metrics-listen", "127.0.0.1:0", "--device-plugin", "false"});
    address_ = MetricsAddress(Log());
    ASSERT_NE(address_, "") << Log();
    ASSERT_TRUE(WaitFor([&] { return HttpGet(address_, "/readyz").status == 200; }, seconds(60)))
        << HttpGet(address_, "/readyz").body;
  }
  std::string Scrape() { return HttpGet(address_, "/metrics").body; }

  // Debian's Prometheus scraping this dxshim and, unless `exporter` is "", windows_exporter's text
  // at that HOST:PORT, every second, both labelled node="test-node" as
  // deploy/monitoring/prometheus-scrape.yaml labels them, and evaluating deploy/monitoring's
  // recording rules every second. Sets web_ (HOST:PORT of its HTTP API).
  std::unique_ptr<Process> StartPrometheus(const std::string& exporter) {
    web_ = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
    std::ofstream config(dir_ / "prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           << "rule_files:\n  - " << DXSHIM_SOURCE_DIR
           << "/deploy/monitoring/dxshim-gpu-rules.yaml\n"
           << "scrape_configs:\n"
           << "  - job_name: dxshim\n    static_configs:\n      - targets: ['" << address_
           << "']\n        labels: {node: test-node}\n";
    if (!exporter.empty()) {
      config << "  - job_name: windows-exporter\n    metrics_path: /metrics.txt\n"
             << "    static_configs:\n      - targets: ['" << exporter
             << "']\n        labels: {node: test-node}\n";
    }
    config.close();
    return std::make_unique<Process>(
        std::vector<std::string>{"prometheus", "--config.file=" + dir_ / "prometheus.yml",
                                 "--storage.tsdb.path=" + dir_ / "tsdb",
                                 "--web.listen-address=" + web_},
        dir_ / "prometheus.log");
  }
  // An instant query of the Prometheus StartPrometheus started: the API's JSON answer.
  std::string Query(const std::string& promql) {
    std::string encoded;
    for (const char c : promql) {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", static_cast<unsigned char>(c));
      encoded += std::isalnum(static_cast<unsigned char>(c)) ? std::string(1, c) : hex;
    }
    return HttpGet(web_, "/api/v1/query?query=" + encoded).body;
  }

  // The dxshim_container_gpu_info lines of a scrape, sorted as dxshim writes them.
  static std::string InfoLines(const std::string& text) {
    std::istringstream lines(text);
    std::string out;
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("dxshim_container_gpu_info{")) out += line + "\n";
    }
    return out;
  }

  std::string address_;
  std::string web_;
};

std::vector<std::string> Holder(const std::string& pod, const std::string& container) {
  return {"namespace=\"default\"",
          "pod=\"" + pod + "\"",
          "container=\"" + container + "\"",
          "gpu=\"0000:e2:00.0\"",
          std::string("luid=\"") + kLuid + "\"",
          "vendor=\"NVIDIA\""};
}

TEST_F(GpuHolders, EachContainerIsNamedOnItsGpuAcrossAKillAndUntilItsPodStops) {
  Start();
  const auto encoder = RunPod("encoder", true);
  std::string id;
  ASSERT_TRUE(CreateAndStart(encoder, BusyboxRunning("ffmpeg", "sleep 3600"), &id).ok()) << Log();
  ASSERT_TRUE(CreateAndStart(encoder, BusyboxRunning("sidecar", "sleep 3600"), &id).ok()) << Log();
  const auto render = RunPodWith("render", {{"dxshim.io/gpu-memory", "6Gi"}});
  ASSERT_TRUE(CreateAndStart(render, BusyboxRunning("unreal", "sleep 3600"), &id).ok()) << Log();
  const auto plain = RunPod("plain", false);
  ASSERT_TRUE(CreateAndStart(plain, BusyboxRunning("web", "sleep 3600"), &id).ok()) << Log();

  auto text = Scrape();
  const auto before = InfoLines(text);
  std::cout << "before kill -9:\n" << before;
  EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", Holder("encoder", "ffmpeg")), 1) << text;
  EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", Holder("encoder", "sidecar")), 1);
  EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", Holder("render", "unreal")), 1);
  EXPECT_EQ(std::count(before.begin(), before.end(), '\n'), 3) << "the plain pod has no GPU";
  EXPECT_EQ(Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"pod=\"render\""}),
            6.0 * (1ull << 30));
  EXPECT_EQ(Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"pod=\"encoder\""}),
            4.0 * (1ull << 30))
      << "the default: 16Gi over 4 pods";
  EXPECT_EQ(Sample(text, "dxshim_gpu_pods", {std::string("luid=\"") + kLuid + "\""}), 2);

  // A crash: the restarted dxshim reads the holders back from containerd (the sandboxes' and the
  // containers' metadata it keeps), and says exactly what it said before.
  KillDxshim();
  Start();
  std::string after;
  EXPECT_TRUE(WaitFor([&] { return (after = InfoLines(text = Scrape())) == before; }, seconds(30)))
      << "before:\n"
      << before << "after:\n"
      << after;
  std::cout << "after kill -9:\n" << after;
  EXPECT_EQ(Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"pod=\"render\""}),
            6.0 * (1ull << 30));

  // The pod stops: its hold ends, and so do its series.
  v1::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(encoder);
  v1::StopPodSandboxResponse stopped;
  ASSERT_TRUE(client_->runtime->StopPodSandbox(Deadline(seconds(60)).get(), stop, &stopped).ok());
  // (A scrape may show what was a second ago: one rendering answers every scrape of a second.)
  EXPECT_TRUE(WaitFor(
      [&] {
        return std::isnan(
            Sample(text = Scrape(), "dxshim_container_gpu_info", {"pod=\"encoder\""}));
      },
      seconds(5)))
      << text;
  EXPECT_TRUE(
      std::isnan(Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"pod=\"encoder\""})));
  EXPECT_EQ(Sample(text, "dxshim_container_gpu_info", Holder("render", "unreal")), 1) << text;
}

// What windows_exporter's gpu collector says about the test GPU (and a second GPU of the node no
// pod holds) `engine_seconds` into the run: names and labels as internal/collector/gpu/gpu.go
// declares them in Build(); LUID as gpu.go:272 formats it.
std::string WindowsExporterText(double engine_seconds) {
  const std::string gpu0 =
      std::string(
          "device_id=\"PCI\\\\VEN_10DE&DEV_1EB8&SUBSYS_00000000&REV_00\\\\4&E2E2&0&0000\"") +
      ",luid=\"" + kLuid + "\"";
  const std::string gpu1 =
      "device_id=\"PCI\\\\VEN_10DE&DEV_1EB8&SUBSYS_00000000&REV_00\\\\4&E2E2&0&0008\","
      "luid=\"0x00000000_0x000E2E21\"";
  char engine[64];
  std::snprintf(engine, sizeof(engine), "%.3f", engine_seconds);
  std::ostringstream out;
  out << "# HELP windows_gpu_info A metric with a constant '1' value labeled with gpu device "
         "information.\n# TYPE windows_gpu_info gauge\n"
      << "windows_gpu_info{bus_number=\"226\"," << gpu0
      << ",function_number=\"0\",name=\"Test GPU\",phys=\"0\"} 1\n"
      << "windows_gpu_info{bus_number=\"226\"," << gpu1
      << ",function_number=\"1\",name=\"Test GPU\",phys=\"0\"} 1\n"
      << "# HELP windows_gpu_dedicated_video_memory_size_bytes The size, in bytes, of memory that "
         "is dedicated from video memory.\n"
      << "# TYPE windows_gpu_dedicated_video_memory_size_bytes gauge\n"
      << "windows_gpu_dedicated_video_memory_size_bytes{" << gpu0 << "} 1.7179869184e+10\n"
      << "windows_gpu_dedicated_video_memory_size_bytes{" << gpu1 << "} 1.7179869184e+10\n"
      << "# HELP windows_gpu_adapter_memory_dedicated_bytes Dedicated GPU memory usage in bytes.\n"
      << "# TYPE windows_gpu_adapter_memory_dedicated_bytes gauge\n"
      << "windows_gpu_adapter_memory_dedicated_bytes{" << gpu0 << ",phys=\"0\"} 3.221225472e+09\n"
      << "windows_gpu_adapter_memory_dedicated_bytes{" << gpu1 << ",phys=\"0\"} 0\n"
      << "# HELP windows_gpu_engine_time_seconds Total running time of the GPU in seconds.\n"
      << "# TYPE windows_gpu_engine_time_seconds counter\n"
      << "windows_gpu_engine_time_seconds{" << gpu0
      << ",eng=\"0\",engtype=\"3D\",phys=\"0\",process_id=\"4242\"} " << engine << "\n"
      << "windows_gpu_engine_time_seconds{" << gpu1
      << ",eng=\"0\",engtype=\"3D\",phys=\"0\",process_id=\"4343\"} 0\n";
  return out.str();
}

TEST_F(GpuHolders, PrometheusPutsThePodsNameOnItsGpusUtilisation) {
  Start();
  const auto pod = RunPod("encoder", true);
  std::string id;
  ASSERT_TRUE(CreateAndStart(pod, BusyboxRunning("ffmpeg", "sleep 3600"), &id).ok()) << Log();

  // windows_exporter's text, rewritten (atomically) every 100 ms as its engine time grows.
  const auto exporter_dir = dir_ / "windows_exporter";
  std::filesystem::create_directories(exporter_dir);
  std::atomic<bool> stop{false};
  const auto started = std::chrono::steady_clock::now();
  const auto write = [&] {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::ofstream(exporter_dir + "/metrics.tmp") << WindowsExporterText(100 + 0.5 * elapsed);
    std::filesystem::rename(exporter_dir + "/metrics.tmp", exporter_dir + "/metrics.txt");
  };
  write();
  std::thread writer([&] {
    while (!stop) {
      write();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const auto exporter = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
  Process server({"python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory",
                  exporter_dir, exporter.substr(exporter.find(':') + 1)},
                 dir_ / "exporter.log");

  const auto prometheus = StartPrometheus(exporter);
  const std::string rule =
      "namespace_pod_container:dxshim_gpu_engine_utilization:ratio_rate1m{engtype=\"3D\"}";
  // rate() divides by the whole minute it looks back over: the figure reaches the engine's 0.5
  // once a minute of samples is stored.
  const auto value_of = [](const std::string& answer) {
    const auto at = answer.rfind(",\"");
    return at == std::string::npos ? 0.0 : std::stod(answer.substr(at + 2));
  };
  std::string answer;
  const bool evaluated = WaitFor(
      [&] {
        answer = Query(rule);
        return answer.find("\"result\":[{") != std::string::npos && value_of(answer) > 0.45;
      },
      seconds(180));
  stop = true;
  writer.join();
  ASSERT_TRUE(evaluated) << answer << "\n" << prometheus->Log() << server.Log();
  std::cout << "query " << rule << ":\n" << answer << "\n";
  EXPECT_NE(answer.find("\"pod\":\"encoder\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"namespace\":\"default\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"container\":\"ffmpeg\""), std::string::npos) << answer;
  EXPECT_NE(answer.find(std::string("\"luid\":\"") + kLuid + "\""), std::string::npos) << answer;
  EXPECT_EQ(answer.find("0x000E2E21"), std::string::npos) << "no pod holds the other GPU";
  EXPECT_LT(value_of(answer), 0.55) << answer;

  // The pod's memory figures: the GPU's dedicated memory in use and its total, and its
  // reservation (the default, 16Gi over 4 pods).
  const auto used = Query("namespace_pod_container:dxshim_gpu_dedicated_memory_used:bytes");
  EXPECT_NE(used.find("\"pod\":\"encoder\""), std::string::npos) << used;
  EXPECT_NE(used.find("\"3221225472\"]"), std::string::npos) << used;
  const auto reserved = Query("namespace_pod:dxshim_gpu_memory_reserved:bytes");
  EXPECT_NE(reserved.find("\"pod\":\"encoder\""), std::string::npos) << reserved;
  EXPECT_NE(reserved.find("\"4294967296\"]"), std::string::npos) << reserved;
}

// The dashboard's table panels as Grafana shows them: tests/monitoring/dashboard_tables.mjs runs
// each table panel's queries against this Prometheus ($node: test-node), makes their frames as
// Grafana's Prometheus data source does, and applies the panel's own transformations with
// Grafana's code (@grafana/data, which scripts/install-deps.sh installs). It exits 1 unless "GPUs
// on $node" has exactly one row per GPU, every cell filled, and "Which pod is on which GPU" one row
// per container holding a GPU, with its pod's memory reservation. Two GPUs: the first shared by
// two pods (three containers), the second held by none.
TEST_F(GpuHolders, TheDashboardsTablesHaveOneRowPerGpuAndOnePerContainer) {
  WriteInventory(2);
  Start();
  const std::string gpu = "0000:e2:00.0";
  const auto encoder = RunPodWith("encoder", {{"dxshim.io/gpu", "1"}, {"dxshim.io/device", gpu}});
  std::string id;
  ASSERT_TRUE(CreateAndStart(encoder, BusyboxRunning("ffmpeg", "sleep 3600"), &id).ok()) << Log();
  ASSERT_TRUE(CreateAndStart(encoder, BusyboxRunning("sidecar", "sleep 3600"), &id).ok()) << Log();
  const auto render =
      RunPodWith("render", {{"dxshim.io/gpu-memory", "6Gi"}, {"dxshim.io/device", gpu}});
  ASSERT_TRUE(CreateAndStart(render, BusyboxRunning("unreal", "sleep 3600"), &id).ok()) << Log();

  const auto prometheus = StartPrometheus("");
  // The pods' reservations come from a recording rule: wait until it has both pods.
  std::string answer;
  ASSERT_TRUE(WaitFor(
      [&] {
        answer = Query("namespace_pod:dxshim_gpu_memory_reserved:bytes");
        return answer.find("\"pod\":\"encoder\"") != std::string::npos &&
               answer.find("\"pod\":\"render\"") != std::string::npos;
      },
      seconds(60)))
      << answer << "\n"
      << prometheus->Log();

  Process tables({"node", std::string(DXSHIM_SOURCE_DIR) + "/tests/monitoring/dashboard_tables.mjs",
                  "http://" + web_,
                  std::string(DXSHIM_SOURCE_DIR) + "/deploy/monitoring/dxshim-gpu-dashboard.json",
                  "test-node", DXSHIM_GRAFANA_DATA},
                 dir_ / "dashboard_tables.log");
  const auto code = tables.Wait(seconds(120));
  const auto out = tables.Log();
  std::cout << "node tests/monitoring/dashboard_tables.mjs:\n" << out;
  ASSERT_TRUE(code.has_value()) << "dashboard_tables.mjs still runs after 2 minutes";
  ASSERT_NE(*code, 127) << "node (Node.js) is not on PATH: run scripts/install-deps.sh";
  ASSERT_NE(*code, 2) << "dashboard_tables.mjs could not run (why is above; without @grafana/data, "
                         "run scripts/install-deps.sh)";
  EXPECT_EQ(*code, 0) << "the dashboard's tables are wrong (above)";

  // The rows, columns as the dashboard orders them: model, vendor, luid, gpu, pods, pod slots,
  // memory shared, memory reserved, exclusive, present; and namespace, pod, container, vendor,
  // luid, gpu, location path, memory reserved by the pod.
  const std::string model = "| Test GPU (a device node made by the test) | NVIDIA | ";
  EXPECT_NE(
      out.find(model + kLuid + " | " + gpu + " | 2 | 4 | 17179869184 | 10737418240 | 0 | 1 |\n"),
      std::string::npos)
      << "the shared GPU: 2 pods, 4Gi (the default, 16Gi over 4) and 6Gi reserved";
  EXPECT_NE(out.find(model +
                     "0x00000000_0x000E2E21 | 0000:e2:00.1 | 0 | 4 | 17179869184 | 0 | 0 | 1 |\n"),
            std::string::npos)
      << "the GPU no pod holds";
  for (const auto& [pod, container, reserved] :
       {std::tuple<std::string, std::string, std::string>{"encoder", "ffmpeg", "4294967296"},
        {"encoder", "sidecar", "4294967296"},
        {"render", "unreal", "6442450944"}}) {
    EXPECT_NE(out.find("| default | " + pod + " | " + container + " | NVIDIA | " + kLuid + " | " +
                       gpu + " | " + nodes_[0].path() + " | " + reserved + " |\n"),
              std::string::npos)
        << pod << "/" << container;
  }
}

}  // namespace
}  // namespace dxshim::test
