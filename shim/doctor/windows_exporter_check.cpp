#include "shim/doctor/windows_exporter_check.h"

#include <cctype>
#include <variant>

#include "shim/base/comma_list.h"
#include "shim/base/host_port.h"
#include "shim/doctor/exposition_text.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim::doctor {
namespace {

constexpr const char* kLine = "windows_exporter";
// collect[]=gpu, URL-encoded as Prometheus' own `params` are.
constexpr const char* kGpuPath = "/metrics?collect%5B%5D=gpu";
constexpr std::string_view kUnknownGpuCollector = "unknown collector gpu";

std::string Minimum() { return kMinimumWindowsExporterText; }

std::string EnableGpuCollector() {
  return "enable its gpu collector (--collectors.enabled \"[defaults],gpu\", or gpu in its config "
         "file's collectors.enabled) and restart it";
}

std::string Upgrade() {
  return "upgrade windows_exporter to " + Minimum() +
         " or later (github.com/prometheus-community/windows_exporter releases), its gpu "
         "collector enabled";
}

std::string Count(std::size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// The first line of an answer's body, at most 200 bytes of it, for a message.
std::string FirstLine(const std::string& body) {
  auto line = body.substr(0, body.find_first_of("\r\n"));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

bool GpuCollectorUnknown(const socket_bridge::HttpAnswer& answer) {
  return answer.status == 400 && answer.body.find(kUnknownGpuCollector) != std::string::npos;
}

// "windows_exporter 0.31.3 at http://...", or without the version when it is not known.
std::string Named(const std::string& version, const std::string& url) {
  return std::string("windows_exporter ") + (version.empty() ? "" : version + " ") + "at " + url;
}

bool OlderThanMinimum(const std::string& version) {
  const auto parsed = ParseExporterVersion(version);
  return parsed && *parsed < kMinimumWindowsExporter;
}

}  // namespace

std::optional<std::array<int, 3>> ParseExporterVersion(std::string_view version) {
  if (!version.empty() && version.front() == 'v') version.remove_prefix(1);
  std::array<int, 3> parts = {0, 0, 0};
  std::size_t at = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::size_t start = at;
    while (at < version.size() && std::isdigit(static_cast<unsigned char>(version[at])) != 0 &&
           at - start < 6) {
      parts[i] = parts[i] * 10 + (version[at] - '0');
      ++at;
    }
    if (at == start) return std::nullopt;  // "", "unknown", "0.x"
    if (i + 1 < parts.size()) {
      if (at >= version.size() || version[at] != '.') return std::nullopt;
      ++at;
    }
  }
  // A suffix may follow ("-rc.0", "-4-gabc1234", "_dirty"), not another digit or dot.
  if (at < version.size() &&
      (std::isdigit(static_cast<unsigned char>(version[at])) != 0 || version[at] == '.')) {
    return std::nullopt;
  }
  return parts;
}

WindowsExporterPage ReadWindowsExporterPage(std::string_view text) {
  WindowsExporterPage page;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    // Only the three series asked for are parsed: the rest are passed over by their first bytes.
    if (!line.starts_with("windows_gpu_info") && !line.starts_with("windows_exporter_") &&
        !line.starts_with("{")) {
      continue;
    }
    const auto sample = ParseExpositionLine(line);
    if (!sample) continue;
    if (sample->name == "windows_exporter_build_info") {
      if (const auto v = sample->labels.find("version"); v != sample->labels.end()) {
        page.version = v->second;
      }
    } else if (sample->name == "windows_gpu_info") {
      ++page.gpu_info;
      const auto luid = sample->labels.find("luid");
      if (luid == sample->labels.end() || luid->second.empty()) {
        ++page.gpu_info_without_luid;
      } else {
        page.luids.insert(luid->second);
      }
    } else if (sample->name == "windows_exporter_collector_success") {
      const auto collector = sample->labels.find("collector");
      if (collector != sample->labels.end() && collector->second == "gpu") {
        page.gpu_collector_success = sample->value != "0";
      }
    }
  }
  return page;
}

Check JudgeWindowsExporter(const std::string& address, std::chrono::milliseconds timeout,
                           const std::optional<socket_bridge::HttpAnswer>& gpu,
                           const std::optional<socket_bridge::HttpAnswer>& all,
                           const std::vector<devices::Device>& gpus) {
  const std::string url = "http://" + address + "/metrics";
  if (!gpu) {
    return Warning(kLine,
                   "nothing answers " + url + " within " + std::to_string(timeout.count()) +
                       " ms: deploy/monitoring's GPU join (which pod is on which GPU) needs "
                       "windows_exporter, which is optional",
                   "install windows_exporter " + Minimum() +
                       " or later with its gpu collector (--collectors.enabled "
                       "\"[defaults],gpu\"); if it listens elsewhere, give doctor "
                       "--windows-exporter HOST:PORT");
  }
  if (GpuCollectorUnknown(*gpu)) {
    const std::string version =
        all && all->status == 200 ? ReadWindowsExporterPage(all->body).version : "";
    const bool older = OlderThanMinimum(version);
    return Warning(kLine,
                   Named(version, url) + " does not run its gpu collector (collect[]=gpu: \"" +
                       FirstLine(gpu->body) + "\")" +
                       (older ? "; and " + version + " is older than " + Minimum() +
                                    ", the first whose gpu series carry the luid label "
                                    "deploy/monitoring's rules join on"
                              : ""),
                   older ? Upgrade() : EnableGpuCollector());
  }
  if (gpu->status != 200) {
    return Warning(
        kLine,
        url + "?collect[]=gpu answers " + std::to_string(gpu->status) + ": " + FirstLine(gpu->body),
        "see windows_exporter's log; deploy/monitoring's GPU join needs its gpu "
        "collector's series");
  }
  const auto page = ReadWindowsExporterPage(gpu->body);
  const std::string named = Named(page.version, url);
  if (OlderThanMinimum(page.version)) {
    return Warning(kLine,
                   named + " is older than " + Minimum() +
                       ": its gpu series carry no luid label (added in v" + Minimum() +
                       "), so deploy/monitoring's rules cannot join them to dxshim's GPUs",
                   Upgrade());
  }
  if (page.gpu_info == 0) {
    // Without windows_exporter_collector_success{collector="gpu"} the collector did not run
    // (an old windows_exporter that served everything, collect[] ignored).
    if (!page.gpu_collector_success) {
      return Warning(kLine, named + " reports no GPU: its gpu collector is not running",
                     EnableGpuCollector());
    }
    return Warning(kLine,
                   named + " reports no GPU (no windows_gpu_info)" +
                       (*page.gpu_collector_success
                            ? ""
                            : ", and its gpu collector fails "
                              "(windows_exporter_collector_success{collector=\"gpu\"} 0)"),
                   "its gpu collector reads the GPUs once, when windows_exporter starts: restart "
                   "windows_exporter once the GPU driver is installed, and see its log for the "
                   "gpu collector's errors");
  }
  if (page.luids.empty()) {
    return Warning(kLine,
                   named + ": its windows_gpu_info (" + std::to_string(page.gpu_info) +
                       " series) has no luid label (windows_exporter before " + Minimum() +
                       "): deploy/monitoring's rules cannot join them to dxshim's GPUs",
                   Upgrade());
  }
  std::vector<std::string> missing;
  std::size_t compared = 0;
  for (const auto& d : gpus) {
    if (d.luid == 0) continue;
    ++compared;
    const auto luid = devices::FormatLuid(d.luid);
    if (!page.luids.contains(luid)) missing.push_back("GPU " + d.id + " (luid " + luid + ")");
  }
  const std::vector<std::string> reported(page.luids.begin(), page.luids.end());
  if (!missing.empty()) {
    return Warning(kLine,
                   named + ": dxshim's " + JoinList(missing, ", ") +
                       (missing.size() == 1 ? " is" : " are") + " not among its GPUs (luid " +
                       JoinList(reported, ", ") +
                       "), so deploy/monitoring's join has nothing for " +
                       (missing.size() == 1 ? "it" : "them"),
                   "restart windows_exporter (Restart-Service windows_exporter): it reads the "
                   "GPUs' LUIDs once, when it starts, and a driver update or reinstall since has "
                   "given the GPU a new LUID");
  }
  const std::string version = page.version.empty() ? "windows_exporter (version not stated)"
                                                   : "windows_exporter " + page.version;
  if (compared == 0) {
    return Ok(kLine, version + " at " + url + ": gpu collector on, " +
                         Count(page.luids.size(), "GPU") + " by luid (" + JoinList(reported, ", ") +
                         "); none of dxshim's GPUs has a LUID to compare");
  }
  return Ok(kLine, version + " at " + url + ": gpu collector on; dxshim's " +
                       Count(compared, "GPU") + " among its " + Count(page.luids.size(), "GPU") +
                       " by luid (" + JoinList(reported, ", ") + ")");
}

Check CheckWindowsExporter(const std::string& address, const std::vector<devices::Device>& gpus,
                           std::chrono::milliseconds timeout) {
  const auto parsed = ParseHostPort(address);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    return Warning(kLine, "--windows-exporter " + address + " is not HOST:PORT (" + *why + ")",
                   std::string("give windows_exporter's address, e.g. ") + kWindowsExporterAddress);
  }
  const auto& where = std::get<HostPort>(parsed);
  if (where.port == 0) {
    return Warning(kLine, "--windows-exporter " + address + " has no port",
                   std::string("give windows_exporter's address, e.g. ") + kWindowsExporterAddress);
  }
  const socket_bridge::NetworkSession winsock;  // Windows: started for this call
  const auto gpu = socket_bridge::HttpGet(where.DialHost(), where.port, kGpuPath, timeout);
  std::optional<socket_bridge::HttpAnswer> all;
  if (gpu && GpuCollectorUnknown(*gpu)) {
    all = socket_bridge::HttpGet(where.DialHost(), where.port, "/metrics", timeout);
  }
  return JudgeWindowsExporter(address, timeout, gpu, all, gpus);
}

}  // namespace dxshim::doctor
