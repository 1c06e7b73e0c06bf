// `dxshim install` and `dxshim uninstall`: their options, what install reads of dxshim's
// configuration, and the installer (shim/install/installer.h) run on this node's system
// (node_system.h: Windows nodes only; elsewhere the command says so).
#include "shim/cli/install_command.h"

#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "config/device_snapshot_config.h"
#include "config/serve_config.h"
#include "config/serve_config_keys.h"
#include "config/serve_defaults.h"
#include "devices/device_source.h"
#include "devices/device_table.h"
#include "devices/node_labels.h"
#include "shim/base/comma_list.h"
#include "shim/cli/node_system.h"
#include "shim/cli/platform.h"
#include "shim/doctor/dxshim_status.h"
#include "shim/install/edit/config_file_edit.h"
#include "shim/install/installer.h"

namespace dxshim {
namespace {

namespace po = boost::program_options;

// Reads the options; the exit code when the command ends here (--help, a bad option).
std::optional<int> Parse(const po::options_description& desc, int argc, char** argv,
                         const std::string& command, po::variables_map& vm) {
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "dxshim " << command << ": " << e.what() << "\n";
    return install::kUsage;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  return std::nullopt;
}

// This node's system, or nullptr with the exit code in `code` when the command cannot run (said
// on stderr): kUsage where it does not run (not a Windows node), kFailed when the node's system
// cannot be opened (the service manager refused: not run as an administrator).
std::unique_ptr<install::NodeSystem> NodeSystemFor(const std::string& command, int& code) {
  try {
    return MakeNodeSystem();
  } catch (const NotAWindowsNode& e) {
    std::cerr << "dxshim " << command << ": " << e.what() << "\n";
    code = install::kUsage;
  } catch (const std::exception& e) {
    std::cerr << "dxshim " << command << ": " << e.what() << "\n";
    code = install::kFailed;
  }
  return nullptr;
}

void Say(const std::string& line) { std::cout << line << std::endl; }

// The node's GPU labels as `dxshim devices --output labels` prints them, of the GPUs serve hands
// out with the configuration at `config_path`: its device source, include-integrated and
// include-detachable (a node whose only GPU is integrated is labelled as having it).
std::vector<std::string> GpuLabels(const std::string& config_path) {
  config::ServeConfig cfg;
  config::ApplyServeConfigFile(cfg, config_path);
  const auto source = config::DeviceSourceOf(cfg);
  const auto found =
      devices::SelectUsable(source->Load(), cfg.include_integrated, cfg.include_detachable);
  std::istringstream lines(devices::FormatLabelLines(devices::NodeLabels(found)));
  std::vector<std::string> labels;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) labels.push_back(line);
  }
  return labels;
}

// What install's check for another GPU device plugin needs from dxshim's configuration: kubelet's
// device plugin folder (device-plugin-dir; without it kubelet's own, kWindowsDevicePluginDir),
// dxshim's resources, and whether its device plugin is on.
void ReadDevicePluginKeys(const std::string& config, install::InstallOptions& o) {
  if (const auto dir = install::ReadTopLevelString(config, "device-plugin-dir")) {
    o.device_plugin_dir = *dir;
  }
  for (const char* key : {"device-plugin-resource", "device-plugin-memory-resource"}) {
    if (const auto name = install::ReadTopLevelString(config, key)) {
      o.dxshim_resources.push_back(*name);
    }
  }
  if (const auto on = install::ReadTopLevelString(config, "device-plugin")) {
    o.dxshim_device_plugin = config::ParseBool(*on);
  }
}

// --node-labels as kubelet reads its own flag: a comma list, blanks around each label dropped.
std::vector<std::string> LabelsOfFlag(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string_view label : SplitCommaList(text)) {
    if (!label.empty()) out.emplace_back(label);
  }
  return out;
}

// The installer's questions to dxshim (shim/install/system/dxshim_probe.h), asked over the pipes
// through loopback bridges only this process may use, one per pipe, kept for the run.
class PipeProbe : public install::DxshimProbe {
 public:
  std::optional<install::CriCallers> Callers(const std::string& pipe, std::string& error) override {
    return doctor::AskCriCallers(Dial(pipe), std::chrono::seconds(5), error);
  }
  bool RuntimeAnswers(const std::string& pipe, std::chrono::milliseconds timeout) override {
    return doctor::CriVersionAnswers(Dial(pipe), timeout);
  }

 private:
  struct Bridge {
    Endpoint dial;
    std::unique_ptr<PipeBridges> bridge;
  };
  const Endpoint& Dial(const std::string& pipe) {
    Bridge& b = bridges_[pipe];
    if (!b.bridge) {
      b.dial = Endpoint{Endpoint::Kind::kPipe, pipe};
      b.bridge = PipeBridges::ForDialing(b.dial);
    }
    return b.dial;
  }
  std::map<std::string, Bridge> bridges_;
};

// DXSHIM_TEST_INTERRUPT=STEP:POINT (tests only: the interruption test): the process ends at once
// at that point of that step (1-based, as the plan prints them; POINT begun, applied or done), as
// if killed there.
install::Interrupt TestInterrupt() {
  const char* spec = std::getenv("DXSHIM_TEST_INTERRUPT");
  if (!spec || !*spec) return {};
  const std::string text = spec;
  const auto colon = text.find(':');
  const std::size_t step = std::stoul(text.substr(0, colon));
  const std::string point = colon == std::string::npos ? "applied" : text.substr(colon + 1);
  return [step, point](std::size_t i, install::StepPoint at) {
    const char* name = at == install::StepPoint::kBegun     ? "begun"
                       : at == install::StepPoint::kApplied ? "applied"
                                                            : "done";
    if (i + 1 != step || point != name) return;
    std::cout << "interrupted at step " << step << " (" << name << "), as a killed run would be"
              << std::endl;
    EndProcessNow(86);
  };
}

}  // namespace

int RunInstall(int argc, char** argv) {
  po::options_description desc(
      "dxshim install [options]\n\n"
      "Puts dxshim between this Windows node's kubelet and containerd: installs the dxshim\n"
      "service, finds how kubelet is launched (a service running kubelet.exe, NSSM with\n"
      "kubeadm's or AKS's script, rke2) and changes the runtime endpoint where that launcher\n"
      "reads it, or takes over containerd's pipe. Restarts only what the change needs, proves\n"
      "on the live node that kubelet uses dxshim, and rolls back otherwise.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "config", po::value<std::string>()->default_value(config::kInstalledWindowsConfig),
      "dxshim's configuration file (its `listen` is kubelet's new endpoint)")(
      "endpoint", po::value<std::string>()->default_value(""),
      "kubelet's new endpoint (default: the configuration's `listen`)")(
      "mode", po::value<std::string>()->default_value("auto"),
      "auto, endpoint (change kubelet's endpoint) or takeover (dxshim serves containerd's pipe, "
      "containerd moves); auto takes over only where the launcher's own script sets the endpoint")(
      "service-only", po::bool_switch(),
      "install and start the dxshim service alone: kubelet and "
      "containerd are not touched (point kubelet at dxshim at bootstrap instead)")(
      "dry-run", po::bool_switch(), "print what would change; change nothing")(
      "allow-other-gpu-plugin", po::bool_switch(),
      "install even though kubelet has another GPU device plugin registered (AKS's DirectX "
      "plugin microsoft.com/directx, TensorWorks' directx.microsoft.com/..., by kubelet's "
      "checkpoint in device-plugin-dir): each GPU is then handed out twice. Without it install "
      "refuses such a node, changing nothing")(
      "restart-service", po::bool_switch(),
      "restart the running dxshim service (its binary was replaced), kubelet left running")(
      "record", po::value<std::string>()->default_value(install::kDefaultRecordPath),
      "where what install changes is recorded (uninstall undoes exactly that)")(
      "service-name", po::value<std::string>()->default_value("dxshim"), "dxshim's service")(
      "takeover-pipe",
      po::value<std::string>()->default_value("\\\\.\\pipe\\containerd-behind-dxshim"),
      "takeover: the pipe containerd moves to")(
      "containerd-config", po::value<std::string>()->default_value(""),
      "takeover: containerd's config.toml (default: the containerd service's --config, else "
      "C:\\Program Files\\containerd\\config.toml)")(
      "node-labels", po::value<std::string>()->default_value("auto"),
      "GPU labels for kubelet's --node-labels: auto (this node's GPUs, as `dxshim devices "
      "--output labels`), none, or key=value,...")(
      "proof-timeout", po::value<int>()->default_value(180),
      "seconds to wait for dxshim to say that the running kubelet makes its CRI calls through it")(
      "service-timeout", po::value<int>()->default_value(90),
      "seconds to wait for a service to start or stop");
  po::variables_map vm;
  if (const auto done = Parse(desc, argc, argv, "install", vm)) return *done;
  int code = install::kUsage;
  const auto system = NodeSystemFor("install", code);
  if (!system) return code;
  install::InstallOptions o;
  o.say = Say;
  o.interrupt = TestInterrupt();
  o.mode = vm["mode"].as<std::string>();
  o.service_only = vm["service-only"].as<bool>();
  o.dry_run = vm["dry-run"].as<bool>();
  o.allow_other_gpu_plugin = vm["allow-other-gpu-plugin"].as<bool>();
  o.plan.replaced_binary = vm["restart-service"].as<bool>();
  o.record_path = system->ExpandEnvironment(vm["record"].as<std::string>());
  o.plan.service = vm["service-name"].as<std::string>();
  o.plan.dxshim_config = system->ExpandEnvironment(vm["config"].as<std::string>());
  o.plan.takeover_pipe = vm["takeover-pipe"].as<std::string>();
  o.plan.containerd_config = vm["containerd-config"].as<std::string>();
  o.proof_timeout = std::chrono::seconds(vm["proof-timeout"].as<int>());
  o.service_timeout = std::chrono::seconds(vm["service-timeout"].as<int>());
  const auto config = system->ReadFile(o.plan.dxshim_config);
  if (!config) {
    std::cerr << "dxshim install: the configuration " << o.plan.dxshim_config
              << " does not exist\n";
    return install::kUsage;
  }
  try {
    if (const auto listen = install::ReadTopLevelString(*config, "listen")) {
      o.plan.dxshim_endpoint = *listen;
    }
    ReadDevicePluginKeys(*config, o);
    if (!vm["endpoint"].as<std::string>().empty()) {
      o.plan.dxshim_endpoint = vm["endpoint"].as<std::string>();
    }
    const std::string labels = vm["node-labels"].as<std::string>();
    if (labels == "auto") {
      o.plan.node_labels = GpuLabels(o.plan.dxshim_config);
    } else if (labels != "none") {
      o.plan.node_labels = LabelsOfFlag(labels);
    }
  } catch (const std::exception& e) {
    std::cerr << "dxshim install: " << e.what() << "\n";
    return install::kUsage;
  }
  try {
    o.plan.dxshim_command_line =
        "\"" + ThisProgramPath() + "\" serve --config \"" + o.plan.dxshim_config + "\"";
  } catch (const std::exception& e) {  // a path with no UTF-8 form (wide_text.h)
    std::cerr << "dxshim install: the path of this program " << e.what() << "\n";
    return install::kFailed;
  }
  PipeProbe probe;
  return install::Install(*system, probe, o);
}

int RunUninstall(int argc, char** argv) {
  po::options_description desc(
      "dxshim uninstall [options]\n\n"
      "Undoes what `dxshim install` recorded, only while every value is still the one install\n"
      "wrote; restarts what the change needs and removes the dxshim service if install made it.\n\n"
      "Options");
  desc.add_options()("help,h", "show this help")(
      "record", po::value<std::string>()->default_value(install::kDefaultRecordPath),
      "the install record")("service-name", po::value<std::string>()->default_value("dxshim"),
                            "dxshim's service")("service-timeout",
                                                po::value<int>()->default_value(90),
                                                "seconds to wait for a service to start or stop");
  po::variables_map vm;
  if (const auto done = Parse(desc, argc, argv, "uninstall", vm)) return *done;
  int code = install::kUsage;
  const auto system = NodeSystemFor("uninstall", code);
  if (!system) return code;
  install::UninstallOptions o;
  o.say = Say;
  o.interrupt = TestInterrupt();
  o.service = vm["service-name"].as<std::string>();
  o.record_path = system->ExpandEnvironment(vm["record"].as<std::string>());
  o.service_timeout = std::chrono::seconds(vm["service-timeout"].as<int>());
  PipeProbe probe;
  return install::Uninstall(*system, probe, o);
}

}  // namespace dxshim
