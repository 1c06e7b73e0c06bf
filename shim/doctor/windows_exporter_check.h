// `dxshim doctor`'s windows_exporter line (on Windows nodes, or given --windows-exporter): whether
// deploy/monitoring's rules can join the node's windows_exporter to dxshim's GPUs. They join on
// the `luid` label of its gpu collector's series, which windows_exporter writes only since v0.31.1
// (prometheus-community/windows_exporter commit 524fea08, "gpu: fix windows_gpu_info metric"; in
// v0.31.0 internal/collector/gpu/gpu.go:115-120 labelled windows_gpu_info {phys,
// physical_device_object_name, hardware_id, friendly_name, description} and nothing by LUID).
//
// It asks GET /metrics?collect[]=gpu: windows_exporter then runs its gpu collector alone, so the
// answer stays small however many other series the node has, and answers 400 "unknown collector
// gpu" when that collector is not enabled (pkg/collector/collection.go:185-190 Enable,
// internal/httphandler/httphandler.go:87-97 at commit 589ec15d; the same since v0.20). Then it
// asks GET /metrics for the version alone.
//
// Every finding is a warning, never a failure: windows_exporter is optional (dxshim gives GPUs to
// pods without it), and doctor's exit code is what install.ps1 retries on and what the installer
// pod's readiness reports, which monitoring must not hold up.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device.h"
#include "shim/doctor/doctor_check.h"
#include "shim/socket_bridge/http_get.h"

namespace dxshim::doctor {

// windows_exporter's default listening address (its --web.listen-address, ":9182"), asked on
// loopback.
inline constexpr const char* kWindowsExporterAddress = "127.0.0.1:9182";
// The first windows_exporter whose gpu series carry `luid`: v0.31.1 (commit 524fea08).
inline constexpr std::array<int, 3> kMinimumWindowsExporter = {0, 31, 1};
inline constexpr const char* kMinimumWindowsExporterText = "0.31.1";

// The major, minor and patch of a windows_exporter version as windows_exporter_build_info carries
// it ("0.31.3"; its release workflow drops the tag's "v", which is accepted too), whatever follows
// them ("0.31.3-rc.0", "0.31.2-4-gabc1234"); nullopt for anything else ("", "unknown").
std::optional<std::array<int, 3>> ParseExporterVersion(std::string_view version);

// What a windows_exporter /metrics answer says that the line needs:
// - windows_exporter_build_info{version, revision, branch, goversion, goos, goarch, tags} 1
//   (client_golang's prometheus/collectors/version, registered at
//   internal/httphandler/httphandler.go:125);
// - windows_gpu_info{luid, device_id, name, bus_number, phys, function_number} 1 per adapter
//   (internal/collector/gpu/gpu.go:128-133, :346-358; without device_id in v0.31.1 and v0.31.2,
//   with other labels and no luid in v0.31.0);
// - windows_exporter_collector_success{collector="gpu"} (pkg/collector/collection.go:169-174).
struct WindowsExporterPage {
  std::string version;                        // build_info's version label; "" when none
  std::size_t gpu_info = 0;                   // windows_gpu_info series
  std::size_t gpu_info_without_luid = 0;      // of them, without a `luid` label (or an empty one)
  std::set<std::string> luids;                // the others' luids
  std::optional<bool> gpu_collector_success;  // nullopt when not reported
};
WindowsExporterPage ReadWindowsExporterPage(std::string_view text);

// The line for windows_exporter at `address` ("HOST:PORT", for the messages) from its answers:
// `gpu` to GET /metrics?collect[]=gpu, `all` to GET /metrics (asked only when the first says the
// gpu collector is unknown), each nullopt when nothing answered within `timeout`. `gpus` are
// dxshim's (the GPUs line's), compared by LUID as dxshim's metrics label them and windows_exporter
// writes it (devices::FormatLuid, "0x%08X_0x%08X": gpu.go:272); one without a LUID (0) is left
// out.
Check JudgeWindowsExporter(const std::string& address, std::chrono::milliseconds timeout,
                           const std::optional<socket_bridge::HttpAnswer>& gpu,
                           const std::optional<socket_bridge::HttpAnswer>& all,
                           const std::vector<devices::Device>& gpus);

// Asks windows_exporter at `address` and judges its answers; each GET's whole answer must come
// within `timeout` (the answer is at most socket_bridge::kMaxAnswerBytes).
Check CheckWindowsExporter(const std::string& address, const std::vector<devices::Device>& gpus,
                           std::chrono::milliseconds timeout);

}  // namespace dxshim::doctor
