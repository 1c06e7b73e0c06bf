// The real Windows dxshim.exe's `doctor` under wine, on a node made of the real dxshim.exe serving
// its named pipe in front of the test's real containerd (reached on loopback TCP, as in
// windows_exe_e2e_test), in one private wine prefix:
//   - check 2 goes through the named pipe (npipe://./pipe/NAME, bridged to loopback inside
//     doctor) to dxshim.exe and on to containerd;
//   - check 3 asks containerd directly and, this being a "Windows node", fails containerd 1.6
//     (it drops a Windows container's devices), naming 1.7;
//   - check 4 reads the kubelet service's command line from the service manager of the prefix
//     (written with sc.exe, which keeps it in the registry's ImagePath): none is a warning, one
//     naming containerd's pipe fails naming both pipes, one whose --config file names dxshim's
//     is ok;
//   - check 5 finds the device plugin's socket (its fresh name), asks the plugin through the
//     socket bridge (the TCP stand-in for AF_UNIX wine lacks, DXSHIM_PLUGIN_SOCKETS=tcp-stand-in
//     as in windows_plugin_e2e_test) and reads the test kubelet's kubelet_internal_checkpoint;
//   - check 8 asks dxshim.exe's /readyz through Winsock.
// Wine has no GPU: the GPUs are an inventory of test devices, as in the other wine tests.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/support/containerd.h"
#include "tests/support/test_gpu.h"
#include "tests/support/test_kubelet.h"
#include "tests/support/wine_dxshim.h"

namespace dxshim::test {
namespace {

struct Line {
  std::string status;
  std::string detail;
  std::string fix;
};

class WindowsDoctor : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("DXSHIM_PLUGIN_SOCKETS", "tcp-stand-in", 1);  // wine passes it to both programs
    dir_ = new TempDir;
    std::filesystem::create_directories(*dir_ / "device-plugins");
    kubelet_ =
        new TestKubelet(*dir_ / "device-plugins", true, socket_bridge::SocketFamily::kTcpStandIn);
    std::filesystem::create_directories(*dir_ / "store");
    std::ofstream(*dir_ / "store/libdxgpu.so") << "from dxshim.exe\n";
    device_ = new DeviceNode("wine-doctor", 0);
    WriteTestGpuInventory(*dir_ / "inventory.yaml", {device_}, "e6", *dir_ / "store");
    containerd_ = new Containerd(Containerd::Listen::kUnixAndTcp);
    dxshim_ = new WineDxshim(DXSHIM_WINDOWS_EXE, DXSHIM_PIPE_RELAY_EXE,
                             "tcp://" + containerd_->tcp_address(), Flags("127.0.0.1:0"));
    std::smatch port;
    const auto log = dxshim_->Log();
    ASSERT_TRUE(std::regex_search(log, port, std::regex(R"(serving http://127\.0\.0\.1:(\d+))")))
        << log;
    metrics_ = new std::string("127.0.0.1:" + port[1].str());
    ASSERT_TRUE(kubelet_->WaitForDevices(
        [](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == 1; },
        std::chrono::seconds(120)))
        << dxshim_->Log();
    ASSERT_TRUE(kubelet_->WaitForDevices(
        [](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == 16; },
        std::chrono::seconds(120), TestKubelet::kGpuMemory))
        << dxshim_->Log();
  }

  // What dxshim.exe logged, when a check failed: doctor's lines say what failed, the log says why.
  void TearDown() override {
    if (HasFailure()) std::printf("--- dxshim.exe's log:\n%s\n", dxshim_->Log().c_str());
  }

  static void TearDownTestSuite() {
    delete dxshim_;
    delete kubelet_;
    ::unsetenv("DXSHIM_PLUGIN_SOCKETS");
    delete containerd_;
    delete device_;
    delete dir_;
    delete metrics_;
  }

  // serve's and doctor's configuration: one pod per GPU.
  static std::vector<std::string> Flags(const std::string& metrics) {
    return {"--device-source",
            "inventory:" + *dir_ / "inventory.yaml",
            "--target",
            "linux",
            "--linux-system32-path",
            "/usr/lib/dxshim",
            "--max-containers-per-device",
            "1",
            "--device-plugin",
            "true",
            "--device-plugin-after-kubelet",  // the test kubelet makes no CRI call
            "false",
            "--device-plugin-dir",
            WindowsPath(*dir_ / "device-plugins"),
            "--vm-runtime-handlers",
            "dxshim-test-vm",
            "--metrics-listen",
            metrics};
  }

  static std::string Listen() { return "npipe://./pipe/" + dxshim_->pipe(); }

  // doctor's flags: serve's, and a deadline for each check long enough for wine on a machine
  // loaded by the other tests (its 3 s default has run out there); what doctor reports is
  // checked, never how fast.
  static std::vector<std::string> DoctorFlags() {
    auto flags = Flags(*metrics_);
    flags.insert(flags.end(), {"--timeout", "30s"});
    return flags;
  }

  // `dxshim.exe doctor` with serve's configuration; the lines by check (the first of each).
  std::map<std::string, Line> Doctor(int* code, std::string* text = nullptr) {
    std::vector<std::string> command = {DXSHIM_WINDOWS_EXE, "doctor",
                                        "--listen",         Listen(),
                                        "--runtime",        "tcp://" + containerd_->tcp_address(),
                                        "--output",         "json"};
    const auto flags = DoctorFlags();
    command.insert(command.end(), flags.begin(), flags.end());
    std::string out;
    std::string err;
    *code = dxshim_->Run(command, "doctor", &out, &err);
    if (text) *text = out + err;
    google::protobuf::ListValue list;
    const auto parsed = google::protobuf::util::JsonStringToMessage(out, &list);
    EXPECT_TRUE(parsed.ok()) << parsed.ToString() << "\n" << out << err;
    std::map<std::string, Line> lines;
    for (const auto& v : list.values()) {
      const auto& f = v.struct_value().fields();
      const auto check = f.at("check").string_value();
      if (lines.count(check)) continue;
      lines[check] = {f.at("status").string_value(), f.at("detail").string_value(),
                      f.at("fix").string_value()};
    }
    return lines;
  }

  static int Sc(const std::vector<std::string>& args) {
    std::vector<std::string> command = {"sc.exe"};
    command.insert(command.end(), args.begin(), args.end());
    std::string out;
    return dxshim_->Run(command, "sc", &out);
  }

  static TempDir* dir_;
  static TestKubelet* kubelet_;
  static DeviceNode* device_;
  static Containerd* containerd_;
  static WineDxshim* dxshim_;
  static std::string* metrics_;
};

TempDir* WindowsDoctor::dir_ = nullptr;
TestKubelet* WindowsDoctor::kubelet_ = nullptr;
DeviceNode* WindowsDoctor::device_ = nullptr;
Containerd* WindowsDoctor::containerd_ = nullptr;
WineDxshim* WindowsDoctor::dxshim_ = nullptr;
std::string* WindowsDoctor::metrics_ = nullptr;

TEST_F(WindowsDoctor, ChecksThePipeTheRuntimeTheKubeletServiceAndTheMetrics) {
  int code = 0;
  std::string text;
  auto lines = Doctor(&code, &text);
  std::printf("%s\n", text.c_str());
  // containerd 1.6 on a Windows node fails, so the exit code is 1 throughout.
  EXPECT_EQ(code, 1) << text;
  EXPECT_EQ(lines["configuration"].status, "ok") << text;
  EXPECT_EQ(lines["dxshim"].status, "ok") << text;
  // The pipe's server, from the system: dxshim.exe itself.
  EXPECT_EQ(lines["dxshim"].detail.rfind(Listen() + ", served by dxshim.exe (pid ", 0), 0u) << text;
  EXPECT_NE(lines["dxshim"].detail.find("answers, relaying to tcp://" + containerd_->tcp_address() +
                                        ": containerd 1.6"),
            std::string::npos)
      << text;
  EXPECT_EQ(lines["runtime"].status, "failed") << text;
  EXPECT_NE(lines["runtime"].detail.find("drops the devices of a Windows container's config"),
            std::string::npos)
      << text;
  EXPECT_NE(lines["runtime"].fix.find("upgrade containerd to 1.7 or later"), std::string::npos);
  EXPECT_EQ(lines["kubelet"].status, "warning") << text;  // no kubelet service yet
  EXPECT_EQ(lines["GPU 0000:e6:00.0"].status, "ok") << text;
  EXPECT_EQ(lines["device plugin dxshim.io/gpu"].status, "ok") << text;
  EXPECT_NE(lines["device plugin dxshim.io/gpu"].detail.find(
                "serves 1 healthy of 1 advertised; kubelet has them registered"),
            std::string::npos)
      << text;
  EXPECT_EQ(lines["device plugin dxshim.io/gpu-memory"].status, "ok") << text;
  EXPECT_EQ(lines["metrics"].status, "ok") << text;
  EXPECT_EQ(lines["metrics"].detail, "http://" + *metrics_ + "/readyz answers ready") << text;
  EXPECT_EQ(lines["holders"].detail, "no pod holds a GPU") << text;
  // No windows_exporter here: a warning (it is optional), which leaves the exit code alone.
  EXPECT_EQ(lines["windows_exporter"].status, "warning") << text;
  EXPECT_EQ(
      lines["windows_exporter"].detail.rfind("nothing answers http://127.0.0.1:9182/metrics", 0),
      0u)
      << text;

  // dxshim's pipe not served (dxshim stopped): the first line says so, without waiting for it.
  std::vector<std::string> down = {DXSHIM_WINDOWS_EXE, "doctor",
                                   "--listen",         "npipe://./pipe/dxshim-stopped",
                                   "--runtime",        "tcp://" + containerd_->tcp_address(),
                                   "--output",         "json"};
  const auto flags_down = DoctorFlags();
  down.insert(down.end(), flags_down.begin(), flags_down.end());
  std::string down_out;
  EXPECT_EQ(dxshim_->Run(down, "doctor-down", &down_out), 1);
  EXPECT_NE(down_out.find("nothing accepts a connection on npipe://./pipe/dxshim-stopped"),
            std::string::npos)
      << down_out;

  // A kubelet service that bypasses dxshim, as most distributions install it.
  ASSERT_EQ(Sc({"create", "kubelet", "binPath=",
                "C:\\k\\kubelet.exe --v=2 "
                "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd"}),
            0);
  std::string image;
  dxshim_->Run(
      {"reg.exe", "query", "HKLM\\SYSTEM\\CurrentControlSet\\Services\\kubelet", "/v", "ImagePath"},
      "reg", &image);
  EXPECT_NE(image.find("npipe:////./pipe/containerd-containerd"), std::string::npos) << image;
  lines = Doctor(&code, &text);
  EXPECT_EQ(lines["kubelet"].status, "failed") << text;
  EXPECT_NE(lines["kubelet"].detail.find(
                "the kubelet service (a service that runs kubelet.exe) at its next start uses "
                "npipe:////./pipe/containerd-containerd"),
            std::string::npos)
      << lines["kubelet"].detail;
  EXPECT_NE(lines["kubelet"].detail.find(
                "(its ImagePath in HKLM\\SYSTEM\\CurrentControlSet\\Services\\kubelet), not "
                "dxshim's " +
                Listen()),
            std::string::npos)
      << lines["kubelet"].detail;
  EXPECT_NE(lines["kubelet"].fix.find("dxshim install"), std::string::npos);

  // The table (the README shows this one), in UTF-8 whatever the console's code page.
  std::string table;
  std::vector<std::string> command = {DXSHIM_WINDOWS_EXE, "doctor",
                                      "--listen",         Listen(),
                                      "--runtime",        "tcp://" + containerd_->tcp_address()};
  const auto flags = DoctorFlags();
  command.insert(command.end(), flags.begin(), flags.end());
  std::string table_errors;
  EXPECT_EQ(dxshim_->Run(command, "doctor-table", &table, &table_errors), 1);
  std::printf("%s%s", table.c_str(), table_errors.c_str());
  EXPECT_NE(table.find("\u2717 kubelet"), std::string::npos) << table;
  EXPECT_NE(table.find("\u2713 dxshim"), std::string::npos) << table;
  EXPECT_NE(table.find("\u2717 runtime"), std::string::npos) << table;

  // Pointed at dxshim's pipe (in another spelling of the same pipe) by its --config file.
  const auto kubelet_config = *dir_ / "kubelet-config.yaml";
  std::ofstream(kubelet_config) << "kind: KubeletConfiguration\n"
                                << "containerRuntimeEndpoint: npipe:////./pipe/" << dxshim_->pipe()
                                << "\n";
  ASSERT_EQ(Sc({"delete", "kubelet"}), 0);
  ASSERT_EQ(Sc({"create", "kubelet",
                "binPath=", "C:\\k\\kubelet.exe --v=2 --config=" + WindowsPath(kubelet_config)}),
            0);
  lines = Doctor(&code, &text);
  EXPECT_EQ(lines["kubelet"].status, "ok") << text;
  EXPECT_NE(lines["kubelet"].detail.find("(the --config file " + WindowsPath(kubelet_config) + ")"),
            std::string::npos)
      << lines["kubelet"].detail;
  EXPECT_EQ(Sc({"delete", "kubelet"}), 0);
  // Everything but containerd 1.6 (and the absent windows_exporter) is as it should be.
  for (const auto& [check, line] : lines) {
    if (check != "runtime" && check != "windows_exporter") {
      EXPECT_EQ(line.status, "ok") << check << ": " << line.detail;
    }
  }
}

}  // namespace
}  // namespace dxshim::test
