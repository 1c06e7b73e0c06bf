#include "shim/doctor/doctor.h"

#include <functional>

#include "shim/doctor/gpu_check.h"
#include "shim/doctor/install_check.h"
#include "shim/doctor/kubelet_check.h"
#include "shim/doctor/metrics_check.h"
#include "shim/doctor/other_gpu_plugins_check.h"
#include "shim/doctor/plugin_check.h"
#include "shim/doctor/windows_exporter_check.h"

namespace dxshim::doctor {
namespace {

// The lines of one check; an exception it throws is its failed line, never the end of doctor.
void Run(Checks& checks, const std::string& name, const std::function<Checks()>& check) {
  try {
    for (auto& c : check()) checks.push_back(std::move(c));
  } catch (const std::exception& e) {
    checks.push_back(Failed(name, std::string("the check itself failed: ") + e.what(),
                            "run doctor elevated (Administrator) or as root; if it already is, "
                            "report this line"));
  }
}

}  // namespace

void RunChecks(const DoctorSetup& setup, Checks& checks) {
  std::optional<RuntimeVersion> relayed;
  std::optional<RuntimeVersion> direct;
  Run(checks, "dxshim", [&] { return Checks{CheckDxshim(setup.listen, setup.runtime, relayed)}; });
  Run(checks, "runtime",
      [&] { return Checks{CheckRuntime(setup.runtime, setup.windows_node, relayed, direct)}; });
  Run(checks, "kubelet", [&] { return Checks{CheckKubelet(FindKubelets(), setup.listen.name)}; });
  Run(checks, "install", [] { return CheckInstall(); });
  Run(checks, "device plugin", [&] { return CheckDevicePlugin(setup.cfg, setup.runtime.timeout); });
  Run(checks, "other GPU device plugins", [&] { return Checks{CheckOtherGpuPlugins(setup.cfg)}; });
  std::vector<devices::Device> gpus;
  Run(checks, "GPUs", [&] { return CheckGpus(setup.cfg, gpus); });
  Run(checks, "vm-runtime-handlers", [&] {
    return CheckVmHandlers(setup.cfg.vm_runtime_handlers,
                           direct ? RuntimeHandlers(setup.runtime) : std::nullopt);
  });
  if (!setup.cfg.metrics_listen.empty()) {
    Run(checks, "metrics",
        [&] { return Checks{CheckMetrics(setup.cfg.metrics_listen, setup.runtime.timeout)}; });
  }
  if (!setup.windows_exporter.empty()) {
    Run(checks, "windows_exporter", [&] {
      return Checks{CheckWindowsExporter(setup.windows_exporter, gpus, setup.runtime.timeout)};
    });
  }
  Run(checks, "holders", [&] {
    if (!direct) {
      return Checks{Warning("holders", "not known: the runtime does not answer",
                            "see the runtime check above")};
    }
    return CheckHolders(setup.runtime, setup.cfg.policy, gpus);
  });
}

}  // namespace dxshim::doctor
