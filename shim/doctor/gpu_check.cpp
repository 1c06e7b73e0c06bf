#include "shim/doctor/gpu_check.h"

#include <filesystem>

#include "config/device_snapshot_config.h"
#include "devices/allocation/gpu_memory.h"
#include "devices/device_source.h"
#include "shim/base/comma_list.h"
#include "shim/gpu/configured_target.h"
#include "shim/gpu/host_files.h"

namespace dxshim::doctor {

Checks CheckGpus(const config::ServeConfig& cfg, std::vector<devices::Device>& found) {
  std::unique_ptr<devices::DeviceSnapshot> snapshot;
  try {
    snapshot = std::make_unique<devices::DeviceSnapshot>(config::DeviceSourceOf(cfg),
                                                         config::SnapshotOptionsOf(cfg));
  } catch (const std::exception& e) {
    return {Failed("GPUs", "device source " + cfg.device_source + ": " + e.what(),
                   "fix device-source (dxshim devices --device-source ... shows what it reads)")};
  }
  found = snapshot->Current()->devices;
  if (found.empty()) {
    return {Failed("GPUs",
                   "discovery (" + cfg.device_source + ") hands out no GPU" +
                       (cfg.include_integrated ? "" : " (integrated GPUs left out)") +
                       (cfg.include_detachable ? "" : " (detachable GPUs left out)"),
                   "install the GPU's driver (Device Manager must show the GPU working); "
                   "`dxshim devices --include-integrated --include-detachable` lists every GPU "
                   "discovery sees")};
  }
  HostFiles host(cfg.target);
  Checks checks;
  for (const auto& d : found) {
    const std::string check = "GPU " + d.id;
    std::string what = d.description.empty() ? d.vendor : d.description;
    if (!d.vendor.empty() && what.find(d.vendor) == std::string::npos) {
      what = d.vendor + " " + what;
    }
    what +=
        ", " + devices::FormatBytes(d.dedicated_memory) + ", LUID " + devices::FormatLuid(d.luid);
    if (!d.driver_version.empty()) what += ", driver " + d.driver_version;
    const auto target = ConfiguredTarget(cfg);
    std::vector<std::string> missing;
    std::size_t files = 0;
    for (const auto* list : {&d.system32, &d.syswow64}) {
      for (const auto& f : *list) {
        ++files;
        const auto path = RuntimeFileHostPath(d, f, target);
        if (host.Check(path) != HostFileState::kPresent) missing.push_back(path);
      }
    }
    if (missing.empty()) {
      checks.push_back(Ok(check, what + "; " + std::to_string(files) + " runtime file(s) present"));
      continue;
    }
    const std::string names = JoinList(missing, ", ");
    std::error_code ec;
    const bool folder_gone =
        !d.driver_store.empty() && !std::filesystem::is_directory(d.driver_store, ec);
    const std::string seen =
        what + "; " + std::to_string(missing.size()) + " of " + std::to_string(files) +
        " runtime file(s) its driver lists are missing: " + names +
        (d.driver_store.empty()
             ? ""
             : " (DriverStore folder " + d.driver_store + (folder_gone ? ", gone" : "") + ")");
    if (folder_gone || missing.size() == files) {
      // What a driver update or removal leaves: CreateContainer refuses this GPU's requests.
      checks.push_back(Failed(check, seen,
                              "the driver was updated or removed under dxshim: reinstall the "
                              "GPU's driver (dxshim reads the devices again at the next GPU "
                              "request and never mounts half a driver), or fix "
                              "extra-runtime-files if the file is one of yours"));
    } else {
      // CreateContainer skips a file it never saw (a driver that lists a file it does not ship)
      // and refuses one it saw before: only a file deleted since dxshim started is a fault.
      checks.push_back(Warning(check, seen,
                               "if the driver never shipped it, containers get the others and "
                               "nothing is wrong; if it was deleted, reinstall the GPU's "
                               "driver, since dxshim refuses this GPU's requests until then"));
    }
  }
  return checks;
}

}  // namespace dxshim::doctor
