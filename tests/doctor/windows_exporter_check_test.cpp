// doctor's windows_exporter line: the exposition text read line by line (labels unescaped, odd
// lines skipped), windows_exporter's version against the minimum (0.31.1), what a /metrics page
// says (build_info's version, windows_gpu_info's luids, the gpu collector's success), and the
// line judged from answers shaped as windows_exporter writes them: ok with the version when the
// version is recent enough and every GPU of dxshim's with a LUID is among windows_gpu_info's
// luids; a warning (never a failure: the exit code stays 0) when nothing answers, when it is
// older than 0.31.1, when its gpu collector is off or reports no GPU, when windows_gpu_info has no
// luid label, and when a LUID of dxshim's is missing (LUID drift). Then the whole check against a
// local HTTP server standing in for windows_exporter: what it asks (collect[]=gpu, then /metrics
// for the version only when the collector is unknown), a page of a few MiB, a server that never
// answers, nothing listening, and an address that is not HOST:PORT.
//
// The text samples follow prometheus-community/windows_exporter (commit 589ec15d unless said):
// - windows_gpu_info{luid, device_id, name, bus_number, phys, function_number}: gpu.go:128-133,
//   :346-358, luid written "0x%08X_0x%08X" at gpu.go:272; v0.31.1 (commit f0591d85) without
//   device_id: gpu.go:121-126; v0.31.0 (commit 55c877f5's collector) {phys,
//   physical_device_object_name, hardware_id, friendly_name, description}: gpu.go:115-120.
// - windows_gpu_engine_time_seconds{process_id, luid, device_id, phys, eng, engtype}:
//   gpu.go:154-159.
// - windows_exporter_build_info{version, revision, branch, goversion, goos, goarch, tags} and its
//   HELP text: client_golang prometheus/collectors/version/version.go, registered at
//   internal/httphandler/httphandler.go:125; tools/e2e-output.txt:104-105 shows the HELP line.
// - windows_exporter_collector_success / _duration_seconds{collector}:
//   pkg/collector/collection.go:163-174.
// - The 400 answer to collect[] naming a collector not enabled: pkg/collector/collection.go:188
//   ("unknown collector %s"), wrapped at pkg/collector/handler.go:54 and
//   internal/httphandler/httphandler.go:129, written at httphandler.go:93-94.
// Label values are escaped and labels sorted by name, as client_golang's text encoder writes them.
#include "shim/doctor/windows_exporter_check.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "shim/doctor/exposition_text.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim::doctor {
namespace {

using socket_bridge::HttpAnswer;

constexpr const char* kAddress = "127.0.0.1:9182";
constexpr auto kTimeout = std::chrono::milliseconds(3000);

const std::string kBuildInfoHelp =
    "# HELP windows_exporter_build_info A metric with a constant '1' value labeled by version, "
    "revision, branch, goversion from which windows_exporter was built, and the goos and goarch "
    "for the build.\n"
    "# TYPE windows_exporter_build_info gauge\n";

std::string BuildInfo(const std::string& version) {
  return kBuildInfoHelp +
         "windows_exporter_build_info{branch=\"HEAD\",goarch=\"amd64\",goos=\"windows\","
         "goversion=\"go1.24.4\",revision=\"0b8a257bc2e7d6a5a7d1e1a0b4c6f1e2d3c4b5a6\","
         "tags=\"unknown\",version=\"" +
         version + "\"} 1\n";
}

std::string CollectorStats(const std::string& success) {
  return "# HELP windows_exporter_collector_duration_seconds windows_exporter: Duration of a "
         "collection.\n"
         "# TYPE windows_exporter_collector_duration_seconds gauge\n"
         "windows_exporter_collector_duration_seconds{collector=\"gpu\"} 0.0451873\n"
         "# HELP windows_exporter_collector_success windows_exporter: Whether the collector was "
         "successful.\n"
         "# TYPE windows_exporter_collector_success gauge\n"
         "windows_exporter_collector_success{collector=\"gpu\"} " +
         success + "\n";
}

// GET /metrics?collect[]=gpu on windows_exporter 0.31.3 (and later) on a node with two T4s.
std::string GpuPage0313() {
  return BuildInfo("0.31.3") + CollectorStats("1") +
         "# HELP windows_gpu_engine_time_seconds Total running time of the GPU in seconds.\n"
         "# TYPE windows_gpu_engine_time_seconds counter\n"
         "windows_gpu_engine_time_seconds{device_id=\"PCI\\\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&"
         "REV_A1\\\\4&2E1C5B8A&0&00F0\",eng=\"0\",engtype=\"3D\",luid=\"0x00000000_0x0000D1A2\","
         "phys=\"0\",process_id=\"4120\"} 1234.5678\n"
         "# HELP windows_gpu_info A metric with a constant '1' value labeled with gpu device "
         "information.\n"
         "# TYPE windows_gpu_info gauge\n"
         "windows_gpu_info{bus_number=\"0\",device_id=\"PCI\\\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&"
         "REV_A1\\\\4&2E1C5B8A&0&00F0\",function_number=\"0\",luid=\"0x00000000_0x0000D1A2\","
         "name=\"NVIDIA Tesla T4\",phys=\"30\"} 1\n"
         "windows_gpu_info{bus_number=\"0\",device_id=\"PCI\\\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&"
         "REV_A1\\\\4&2E1C5B8A&0&00F8\",function_number=\"0\",luid=\"0x00000000_0x0000D3B6\","
         "name=\"NVIDIA Tesla T4\",phys=\"31\"} 1\n";
}

// The same on windows_exporter 0.31.1: luid, no device_id.
std::string GpuPage0311() {
  return BuildInfo("0.31.1") + CollectorStats("1") +
         "# HELP windows_gpu_info A metric with a constant '1' value labeled with gpu device "
         "information.\n"
         "# TYPE windows_gpu_info gauge\n"
         "windows_gpu_info{bus_number=\"0\",function_number=\"0\",luid=\"0x00000000_0x0000D1A2\","
         "name=\"NVIDIA Tesla T4\",phys=\"30\"} 1\n";
}

// windows_exporter 0.31.0: windows_gpu_info by index, nothing by LUID.
std::string GpuPage0310() {
  return BuildInfo("0.31.0") + CollectorStats("1") +
         "# HELP windows_gpu_engine_time_seconds Total running time of the GPU in seconds.\n"
         "# TYPE windows_gpu_engine_time_seconds counter\n"
         "windows_gpu_engine_time_seconds{eng=\"0\",engtype=\"3D\",phys=\"0\",process_id=\"4120\"}"
         " 1234.5678\n"
         "# HELP windows_gpu_info A metric with a constant '1' value labeled with gpu device "
         "information.\n"
         "# TYPE windows_gpu_info gauge\n"
         "windows_gpu_info{description=\"NVIDIA Tesla T4\",friendly_name=\"NVIDIA Tesla T4\","
         "hardware_id=\"PCI\\\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\",phys=\"0\","
         "physical_device_object_name=\"\\\\Device\\\\NTPNP_PCI0014\"} 1\n";
}

// windows_exporter's answer to collect[]=gpu without its gpu collector enabled.
const std::string kUnknownGpu =
    "Couldn't create filtered metrics handler: couldn't create collector handler: failed to "
    "create handler with collectors: unknown collector gpu";

// GET /metrics without the gpu collector: build info and another collector's series.
std::string FullPageWithoutGpu(const std::string& version) {
  return BuildInfo(version) +
         "# HELP windows_cpu_time_total Time that processor spent in different modes (dpc, idle, "
         "interrupt, privileged, user)\n"
         "# TYPE windows_cpu_time_total counter\n"
         "windows_cpu_time_total{core=\"0,0\",mode=\"idle\"} 123456.78\n";
}

devices::Device Gpu(const std::string& id, std::uint64_t luid) {
  devices::Device d;
  d.id = id;
  d.luid = luid;
  return d;
}

const std::string kT4a = "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\4&2E1C5B8A&0&00F0";
const std::string kT4b = "PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\4&2E1C5B8A&0&00F8";
const std::vector<devices::Device> kTwoT4 = {Gpu(kT4a, 0xD1A2), Gpu(kT4b, 0xD3B6)};

HttpAnswer Answer(int status, std::string body) { return {status, std::move(body)}; }

Check Judge(const std::optional<HttpAnswer>& gpu, const std::vector<devices::Device>& gpus,
            const std::optional<HttpAnswer>& all = std::nullopt) {
  return JudgeWindowsExporter(kAddress, kTimeout, gpu, all, gpus);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ExpositionLine, ReadsTheNameTheLabelsUnescapedAndTheValue) {
  const auto sample = ParseExpositionLine(
      "windows_gpu_info{bus_number=\"0\",device_id=\"PCI\\\\VEN_10DE&DEV_1EB8\\\\4&2E1C5B8A&0&"
      "00F0\",luid=\"0x00000000_0x0000D1A2\",name=\"NVIDIA Tesla T4\",phys=\"30\"} 1");
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->name, "windows_gpu_info");
  EXPECT_EQ(sample->value, "1");
  EXPECT_EQ(sample->labels.size(), 5u);
  EXPECT_EQ(sample->labels.at("device_id"), "PCI\\VEN_10DE&DEV_1EB8\\4&2E1C5B8A&0&00F0");
  EXPECT_EQ(sample->labels.at("luid"), "0x00000000_0x0000D1A2");
  EXPECT_EQ(sample->labels.at("name"), "NVIDIA Tesla T4");

  const auto escaped = ParseExpositionLine("m{a=\"say \\\"hi\\\"\\n\\\\\"} 2");
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->labels.at("a"), "say \"hi\"\n\\");
  // A '}' or ',' inside a value is part of it.
  const auto inside = ParseExpositionLine("m{a=\"x},y\",b=\"z\"} 3");
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->labels.at("a"), "x},y");
  EXPECT_EQ(inside->labels.at("b"), "z");
}

TEST(ExpositionLine, TakesEveryFormASampleMayHave) {
  const auto bare = ParseExpositionLine("windows_exporter_scrape_duration_seconds 0.0513");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->name, "windows_exporter_scrape_duration_seconds");
  EXPECT_TRUE(bare->labels.empty());
  EXPECT_EQ(bare->value, "0.0513");
  // A timestamp, a CRLF line end, a trailing comma, blanks around the labels.
  const auto full = ParseExpositionLine("m { a = \"1\" , b=\"2\", } 4 1712345678000\r");
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->name, "m");
  EXPECT_EQ(full->labels.at("a"), "1");
  EXPECT_EQ(full->labels.at("b"), "2");
  EXPECT_EQ(full->value, "4");
  const auto empty = ParseExpositionLine("m{} +Inf");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->value, "+Inf");
  // The quoted forms of names that are not identifiers.
  const auto quoted = ParseExpositionLine("{\"windows_gpu_info\",\"gpu.luid\"=\"0x1\"} 1");
  ASSERT_TRUE(quoted.has_value());
  EXPECT_EQ(quoted->name, "windows_gpu_info");
  EXPECT_EQ(quoted->labels.at("gpu.luid"), "0x1");
}

TEST(ExpositionLine, SkipsWhatIsNotASample) {
  for (const char* line : {"", "   ", "# HELP windows_gpu_info A metric", "# TYPE m gauge", "m",
                           "m{a=\"1\"}", "m{a=\"1\"} ", "m{a=\"1\"", "m{a=\"1} 1", "m{a=1} 1",
                           "m{a} 1", "m{\"a\",\"b\"} 1", "9m 1", "{a=\"1\"} 1", "m{a=\"1\"}1"}) {
    EXPECT_FALSE(ParseExpositionLine(line).has_value()) << "'" << line << "'";
  }
}

TEST(ExporterVersion, ReadsMajorMinorAndPatchWhateverFollows) {
  using V = std::array<int, 3>;
  EXPECT_EQ(ParseExporterVersion("0.31.3"), (V{0, 31, 3}));
  EXPECT_EQ(ParseExporterVersion("v0.31.1"), (V{0, 31, 1}));
  EXPECT_EQ(ParseExporterVersion("0.31.0-beta.2"), (V{0, 31, 0}));
  EXPECT_EQ(ParseExporterVersion("0.31.2-4-gabc1234"), (V{0, 31, 2}));
  EXPECT_EQ(ParseExporterVersion("1.0.0_dirty"), (V{1, 0, 0}));
  for (const char* odd : {"", "unknown", "0.31", "0.31.", "0.x.1", "0.31.3.1", "v", "0..1"}) {
    EXPECT_FALSE(ParseExporterVersion(odd).has_value()) << odd;
  }
  EXPECT_EQ(std::string(kMinimumWindowsExporterText), "0.31.1");
  EXPECT_LT(*ParseExporterVersion("0.31.0"), kMinimumWindowsExporter);
  EXPECT_LT(*ParseExporterVersion("0.30.9"), kMinimumWindowsExporter);
  EXPECT_FALSE(*ParseExporterVersion("0.31.1") < kMinimumWindowsExporter);
  EXPECT_FALSE(*ParseExporterVersion("1.0.0") < kMinimumWindowsExporter);
}

TEST(WindowsExporterPage, ReadsTheVersionTheLuidsAndTheGpuCollectorsSuccess) {
  const auto recent = ReadWindowsExporterPage(GpuPage0313());
  EXPECT_EQ(recent.version, "0.31.3");
  EXPECT_EQ(recent.gpu_info, 2u);
  EXPECT_EQ(recent.gpu_info_without_luid, 0u);
  EXPECT_EQ(recent.luids,
            (std::set<std::string>{"0x00000000_0x0000D1A2", "0x00000000_0x0000D3B6"}));
  EXPECT_EQ(recent.gpu_collector_success, true);

  const auto first_with_luid = ReadWindowsExporterPage(GpuPage0311());
  EXPECT_EQ(first_with_luid.luids, (std::set<std::string>{"0x00000000_0x0000D1A2"}));

  const auto without_luid = ReadWindowsExporterPage(GpuPage0310());
  EXPECT_EQ(without_luid.version, "0.31.0");
  EXPECT_EQ(without_luid.gpu_info, 1u);
  EXPECT_EQ(without_luid.gpu_info_without_luid, 1u);
  EXPECT_TRUE(without_luid.luids.empty());

  // An empty luid is none (Prometheus drops an empty label).
  const auto empty_luid = ReadWindowsExporterPage("windows_gpu_info{luid=\"\",phys=\"0\"} 1\n");
  EXPECT_EQ(empty_luid.gpu_info_without_luid, 1u);
  EXPECT_TRUE(empty_luid.luids.empty());

  const auto none = ReadWindowsExporterPage(FullPageWithoutGpu("0.31.3"));
  EXPECT_EQ(none.gpu_info, 0u);
  EXPECT_FALSE(none.gpu_collector_success.has_value());
  EXPECT_EQ(ReadWindowsExporterPage(CollectorStats("0")).gpu_collector_success, false);
  // No line end after the last line, CRLF line ends.
  std::string crlf = GpuPage0311();
  for (std::size_t at = 0; (at = crlf.find('\n', at)) != std::string::npos; at += 2) {
    crlf.replace(at, 1, "\r\n");
  }
  crlf.pop_back();
  crlf.pop_back();
  EXPECT_EQ(ReadWindowsExporterPage(crlf).luids, (std::set<std::string>{"0x00000000_0x0000D1A2"}));
}

TEST(JudgeWindowsExporter, PassesWithTheVersionWhenEveryGpuOfDxshimsIsThere) {
  const auto line = Judge(Answer(200, GpuPage0313()), kTwoT4);
  EXPECT_EQ(line.check, "windows_exporter");
  EXPECT_EQ(line.status, Status::kOk) << line.detail;
  EXPECT_EQ(line.detail,
            "windows_exporter 0.31.3 at http://127.0.0.1:9182/metrics: gpu collector on; dxshim's "
            "2 GPUs among its 2 GPUs by luid (0x00000000_0x0000D1A2, 0x00000000_0x0000D3B6)");
  // The minimum itself, whose windows_gpu_info has no device_id.
  const auto minimum = Judge(Answer(200, GpuPage0311()), {Gpu(kT4a, 0xD1A2)});
  EXPECT_EQ(minimum.status, Status::kOk) << minimum.detail;
  EXPECT_TRUE(Has(minimum.detail, "windows_exporter 0.31.1 at ")) << minimum.detail;
  // A GPU without a LUID (an inventory's) is not compared.
  const auto unknown = Judge(Answer(200, GpuPage0311()), {Gpu(kT4a, 0xD1A2), Gpu("inv-1", 0)});
  EXPECT_EQ(unknown.status, Status::kOk) << unknown.detail;
  const auto none = Judge(Answer(200, GpuPage0311()), {Gpu("inv-1", 0)});
  EXPECT_EQ(none.status, Status::kOk) << none.detail;
  EXPECT_TRUE(Has(none.detail, "none of dxshim's GPUs has a LUID to compare")) << none.detail;
  // No build_info: the luid labels say enough.
  std::string page = GpuPage0311();
  page.erase(0, page.find("# HELP windows_exporter_collector_duration_seconds"));
  const auto unstated = Judge(Answer(200, page), {Gpu(kT4a, 0xD1A2)});
  EXPECT_EQ(unstated.status, Status::kOk) << unstated.detail;
  EXPECT_TRUE(Has(unstated.detail, "windows_exporter (version not stated) at ")) << unstated.detail;
}

TEST(JudgeWindowsExporter, NothingAnsweringIsAWarningSayingTheJoinNeedsIt) {
  const auto line = Judge(std::nullopt, kTwoT4);
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_EQ(line.detail,
            "nothing answers http://127.0.0.1:9182/metrics within 3000 ms: deploy/monitoring's GPU "
            "join (which pod is on which GPU) needs windows_exporter, which is optional");
  EXPECT_TRUE(Has(line.fix, "install windows_exporter 0.31.1 or later")) << line.fix;
  EXPECT_TRUE(Has(line.fix, "--windows-exporter HOST:PORT")) << line.fix;
  EXPECT_EQ(ExitCode({line}), 0);
}

TEST(JudgeWindowsExporter, OlderThanTheMinimumIsAWarningToUpgrade) {
  const auto line = Judge(Answer(200, GpuPage0310()), kTwoT4);
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_EQ(line.detail,
            "windows_exporter 0.31.0 at http://127.0.0.1:9182/metrics is older than 0.31.1: its "
            "gpu series carry no luid label (added in v0.31.1), so deploy/monitoring's rules "
            "cannot join them to dxshim's GPUs");
  EXPECT_TRUE(Has(line.fix, "upgrade windows_exporter to 0.31.1 or later")) << line.fix;
  // Without a version, the missing luid label says the same.
  std::string page = GpuPage0310();
  page.erase(0, page.find("# HELP windows_exporter_collector_duration_seconds"));
  const auto unstated = Judge(Answer(200, page), kTwoT4);
  EXPECT_EQ(unstated.status, Status::kWarning);
  EXPECT_TRUE(Has(unstated.detail,
                  "its windows_gpu_info (1 series) has no luid label "
                  "(windows_exporter before 0.31.1)"))
      << unstated.detail;
  EXPECT_TRUE(Has(unstated.fix, "upgrade windows_exporter to 0.31.1 or later")) << unstated.fix;
}

TEST(JudgeWindowsExporter, TheGpuCollectorOffIsAWarningToEnableIt) {
  const auto line =
      Judge(Answer(400, kUnknownGpu), kTwoT4, Answer(200, FullPageWithoutGpu("0.31.3")));
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_EQ(line.detail,
            "windows_exporter 0.31.3 at http://127.0.0.1:9182/metrics does not run its gpu "
            "collector (collect[]=gpu: \"" +
                kUnknownGpu + "\")");
  EXPECT_TRUE(Has(line.fix, "enable its gpu collector (--collectors.enabled \"[defaults],gpu\""))
      << line.fix;
  // Older as well (before 0.31.0 there is no gpu collector at all): upgrade, and enable it.
  const auto old =
      Judge(Answer(400, kUnknownGpu), kTwoT4, Answer(200, FullPageWithoutGpu("0.30.5")));
  EXPECT_TRUE(Has(old.detail, "; and 0.30.5 is older than 0.31.1")) << old.detail;
  EXPECT_TRUE(Has(old.fix, "upgrade windows_exporter to 0.31.1 or later")) << old.fix;
  EXPECT_TRUE(Has(old.fix, "its gpu collector enabled")) << old.fix;
  // The version unread (its whole page did not come): still the same advice.
  const auto unread = Judge(Answer(400, kUnknownGpu), kTwoT4, std::nullopt);
  EXPECT_TRUE(Has(unread.detail, "windows_exporter at http://127.0.0.1:9182/metrics does not run"))
      << unread.detail;
  // Running, but reporting no GPU: failing, or finding none when it started.
  const auto failing = Judge(Answer(200, BuildInfo("0.31.3") + CollectorStats("0")), kTwoT4);
  EXPECT_EQ(failing.status, Status::kWarning);
  EXPECT_TRUE(Has(failing.detail,
                  "reports no GPU (no windows_gpu_info), and its gpu collector "
                  "fails (windows_exporter_collector_success{collector=\"gpu\"} "
                  "0)"))
      << failing.detail;
  EXPECT_TRUE(Has(failing.fix, "restart windows_exporter once the GPU driver is installed"));
  const auto empty = Judge(Answer(200, BuildInfo("0.31.3") + CollectorStats("1")), kTwoT4);
  EXPECT_EQ(empty.status, Status::kWarning);
  EXPECT_TRUE(Has(empty.detail, "reports no GPU (no windows_gpu_info)")) << empty.detail;
  // An old windows_exporter that ignores collect[] and serves everything, without the collector.
  const auto ignored = Judge(Answer(200, FullPageWithoutGpu("0.31.3")), kTwoT4);
  EXPECT_EQ(ignored.status, Status::kWarning);
  EXPECT_TRUE(Has(ignored.detail, "reports no GPU: its gpu collector is not running"));
  EXPECT_TRUE(Has(ignored.fix, "enable its gpu collector")) << ignored.fix;
  // Another answer: its status and first line.
  const auto other = Judge(Answer(503, "busy\nmore"), kTwoT4);
  EXPECT_EQ(other.status, Status::kWarning);
  EXPECT_EQ(other.detail, "http://127.0.0.1:9182/metrics?collect[]=gpu answers 503: busy");
}

TEST(JudgeWindowsExporter, ALuidOfDxshimsMissingIsAWarningToRestartIt) {
  // A driver update gave the second T4 the LUID 0xF00D; windows_exporter, started before, still
  // reports 0xD3B6.
  const auto line = Judge(Answer(200, GpuPage0313()), {Gpu(kT4a, 0xD1A2), Gpu(kT4b, 0xF00D)});
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_EQ(line.detail,
            "windows_exporter 0.31.3 at http://127.0.0.1:9182/metrics: dxshim's GPU " + kT4b +
                " (luid 0x00000000_0x0000F00D) is not among its GPUs (luid 0x00000000_0x0000D1A2, "
                "0x00000000_0x0000D3B6), so deploy/monitoring's join has nothing for it");
  EXPECT_TRUE(Has(line.fix, "restart windows_exporter")) << line.fix;
  EXPECT_TRUE(Has(line.fix, "reads the GPUs' LUIDs once, when it starts")) << line.fix;
  const auto both = Judge(Answer(200, GpuPage0311()), {Gpu(kT4a, 0xE001), Gpu(kT4b, 0xE002)});
  EXPECT_TRUE(Has(both.detail, " are not among its GPUs")) << both.detail;
  EXPECT_TRUE(Has(both.detail, "nothing for them")) << both.detail;
}

// A local server standing in for windows_exporter: each connection's request line is recorded,
// and answered with the reply for its target (404 for any other), or never when `silent`.
class FakeExporter {
 public:
  FakeExporter(std::map<std::string, std::string> replies, bool silent = false)
      : replies_(std::move(replies)), silent_(silent) {
    std::string error;
    listener_ = socket_bridge::ListenLoopback(port_, error);
    EXPECT_TRUE(listener_.valid()) << error;
    socket_bridge::SetNonBlocking(listener_.get());
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeExporter() {
    stop_ = true;
    thread_.join();
  }
  FakeExporter(const FakeExporter&) = delete;
  FakeExporter& operator=(const FakeExporter&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> targets() const {
    const std::lock_guard lock(mutex_);
    return targets_;
  }

  static std::string Ok(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
           "Content-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  static std::string BadRequest(const std::string& body) {
    return "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body;
  }

 private:
  bool Wait(socket_bridge::NativeSocket s, bool write) const {
    socket_bridge::PollEntry entry{s, !write, write, false, false};
    socket_bridge::Poll(std::span(&entry, 1), std::chrono::milliseconds(10));
    return write ? entry.writable : entry.readable;
  }

  void Serve() {
    while (!stop_) {
      if (!Wait(listener_.get(), false)) continue;
      auto client = socket_bridge::Accept(listener_.get());
      if (!client.valid()) continue;
      socket_bridge::SetNonBlocking(client.get());
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos && !stop_) {
        if (!Wait(client.get(), false)) continue;
        const long n = socket_bridge::Receive(client.get(), buffer, sizeof buffer);
        if (n == 0 || (n < 0 && !socket_bridge::LastCallWouldBlock())) break;
        if (n > 0) request.append(buffer, static_cast<std::size_t>(n));
      }
      const auto first = request.substr(0, request.find("\r\n"));  // GET TARGET HTTP/1.0
      const auto target = first.substr(4, first.rfind(' ') - 4);
      {
        const std::lock_guard lock(mutex_);
        targets_.push_back(target);
      }
      if (silent_) {
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return;
      }
      const auto found = replies_.find(target);
      const std::string reply =
          found == replies_.end() ? "HTTP/1.1 404 Not Found\r\n\r\n" : found->second;
      for (std::size_t sent = 0; sent < reply.size() && !stop_;) {
        if (!Wait(client.get(), true)) continue;
        const long n = socket_bridge::Send(client.get(), reply.data() + sent, reply.size() - sent);
        if (n > 0) sent += static_cast<std::size_t>(n);
        if (n < 0 && !socket_bridge::LastCallWouldBlock()) break;
      }
    }  // the connection is closed: the answer's end
  }

  std::map<std::string, std::string> replies_;
  bool silent_;
  std::uint16_t port_ = 0;
  socket_bridge::Socket listener_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> targets_;
  std::thread thread_;
};

constexpr const char* kGpuTarget = "/metrics?collect%5B%5D=gpu";

TEST(CheckWindowsExporter, AsksForTheGpuCollectorAloneAndPasses) {
  FakeExporter exporter({{kGpuTarget, FakeExporter::Ok(GpuPage0313())}});
  const auto line = CheckWindowsExporter(exporter.address(), kTwoT4, kTimeout);
  EXPECT_EQ(line.status, Status::kOk) << line.detail;
  EXPECT_TRUE(Has(line.detail, "windows_exporter 0.31.3 at http://" + exporter.address() +
                                   "/metrics: gpu collector on; dxshim's 2 GPUs among its 2"))
      << line.detail;
  EXPECT_EQ(exporter.targets(), std::vector<std::string>{kGpuTarget});
}

TEST(CheckWindowsExporter, AsksTheWholePageForTheVersionWhenTheGpuCollectorIsOff) {
  FakeExporter exporter({{kGpuTarget, FakeExporter::BadRequest(kUnknownGpu)},
                         {"/metrics", FakeExporter::Ok(FullPageWithoutGpu("0.30.5"))}});
  const auto line = CheckWindowsExporter(exporter.address(), kTwoT4, kTimeout);
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_TRUE(Has(line.detail, "windows_exporter 0.30.5 at http://" + exporter.address() +
                                   "/metrics does not run its gpu collector"))
      << line.detail;
  EXPECT_EQ(exporter.targets(), (std::vector<std::string>{kGpuTarget, "/metrics"}));
}

TEST(CheckWindowsExporter, ReadsALargePage) {
  // Thousands of engine series (one per process and engine) before the GPUs: about 3 MiB.
  std::string page = BuildInfo("0.31.3") + CollectorStats("1");
  for (int process = 0; process < 18000; ++process) {
    page +=
        "windows_gpu_engine_time_seconds{device_id=\"PCI\\\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&"
        "REV_A1\\\\4&2E1C5B8A&0&00F0\",eng=\"0\",engtype=\"3D\",luid=\"0x00000000_0x0000D1A2\","
        "phys=\"0\",process_id=\"" +
        std::to_string(process) + "\"} 12.5\n";
  }
  page += GpuPage0311().substr(GpuPage0311().find("# HELP windows_gpu_info"));
  ASSERT_GT(page.size(), 3u << 20);
  ASSERT_LT(page.size(), socket_bridge::kMaxAnswerBytes);
  FakeExporter exporter({{kGpuTarget, FakeExporter::Ok(page)}});
  const auto line = CheckWindowsExporter(exporter.address(), {Gpu(kT4a, 0xD1A2)}, kTimeout);
  EXPECT_EQ(line.status, Status::kOk) << line.detail;
}

TEST(CheckWindowsExporter, NeverWaitsPastItsTimeout) {
  FakeExporter exporter({}, /*silent=*/true);
  const auto line =
      CheckWindowsExporter(exporter.address(), kTwoT4, std::chrono::milliseconds(200));
  EXPECT_EQ(line.status, Status::kWarning);
  EXPECT_TRUE(
      Has(line.detail, "nothing answers http://" + exporter.address() + "/metrics within 200 ms"))
      << line.detail;
}

TEST(CheckWindowsExporter, NothingListeningOrAnAddressThatIsNotOne) {
  std::uint16_t port = 0;
  {
    std::string error;
    const auto taken = socket_bridge::ListenLoopback(port, error);  // closed at once: a free port
    ASSERT_TRUE(taken.valid()) << error;
  }
  const auto nobody = CheckWindowsExporter("127.0.0.1:" + std::to_string(port), kTwoT4, kTimeout);
  EXPECT_EQ(nobody.status, Status::kWarning);
  EXPECT_TRUE(Has(nobody.detail, "nothing answers")) << nobody.detail;
  const auto wrong = CheckWindowsExporter("windows-exporter", kTwoT4, kTimeout);
  EXPECT_EQ(wrong.status, Status::kWarning);
  EXPECT_TRUE(Has(wrong.detail, "--windows-exporter windows-exporter is not HOST:PORT"))
      << wrong.detail;
}

}  // namespace
}  // namespace dxshim::doctor
