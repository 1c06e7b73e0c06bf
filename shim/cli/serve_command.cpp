#include "shim/cli/serve_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <thread>
#include <vector>

#include "config/serve_config.h"
#include "devices/allocation/allocator.h"
#include "devices/device_source.h"
#include "devices/make_device_source.h"
#include "devices/node_feature_file.h"
#include "shim/cli/logging.h"
#include "shim/cli/serve_options.h"
#include "shim/cli/stop_request.h"
#include "shim/device_plugin/plugin_process.h"
#include "shim/gpu/gpu_interceptor.h"
#include "shim/gpu/host_files.h"
#include "shim/gpu/ledger_sync.h"
#include "shim/metrics/http_endpoint.h"
#include "shim/metrics/metrics.h"
#include "shim/metrics/node_collector.h"
#include "shim/proxy/proxy_server.h"
#include "shim/version/build_info.h"
#ifdef _WIN32
#include "shim/windows/pipe_transport.h"
#include "shim/windows/service.h"
#endif

namespace dxshim {
namespace {

namespace po = boost::program_options;

const char* Describe(const std::string& key) {
  if (key == "listen") return "endpoint kubelet connects to (unix://, npipe://, tcp://host:port)";
  if (key == "runtime") return "runtime endpoint to relay to (containerd)";
  if (key == "socket-mode") return "file mode of the listening unix socket (octal)";
  if (key == "pipe-sddl") return "who may open the named pipe (Windows; SDDL)";
  if (key == "log-level") return "trace, debug, info, warn, error, critical or off";
  if (key == "log-file") return "log to this file, rotated (empty: stderr)";
  if (key == "log-file-max-size") return "rotate the log file at this size (e.g. 10Mi)";
  if (key == "log-file-count") return "rotated log files to keep";
  if (key == "shutdown-grace") return "time in-flight calls get to finish on SIGTERM (e.g. 10s)";
  if (key == "reconnect-backoff-max") return "longest wait between reconnects to the runtime";
  if (key == "device-source") return "auto, linux, windows or inventory:PATH";
  if (key == "sysfs-root") return "root of sysfs for the linux device source";
  if (key == "device-refresh") return "how often the device source is checked for changes";
  if (key == "include-integrated") return "hand out integrated GPUs too (true/false)";
  if (key == "include-detachable") return "hand out detachable GPUs too (true/false)";
  if (key == "target") return "windows or linux: how devices are put into containers";
  if (key == "max-containers-per-device") return "shared containers per device (1 = exclusive)";
  if (key == "placement") return "spread (least-loaded first) or pack (fill-first)";
  if (key == "allow-namespaces") return "namespaces that may request GPUs (comma list; all)";
  if (key == "deny-namespaces") return "namespaces that may not request GPUs (comma list)";
  if (key == "resync-interval") return "how often the GPU ledger is rebuilt from the runtime";
  if (key == "narrow-class-devices") return "narrow a class/<GUID> device to one GPU";
  if (key == "vm-runtime-handlers") {
    return "runtime handlers that run pods in VMs: GPU requests there fail (comma list; - none)";
  }
  if (key == "device-plugin") return "serve kubelet's device plugin API (true/false)";
  if (key == "device-plugin-dir") return "kubelet's device-plugin directory (kubelet.sock)";
  if (key == "device-plugin-resource") return "extended resource to advertise (dxshim.io/gpu)";
  if (key == "node-feature-file") return "keep this NFD feature file with GPU labels (- none)";
  if (key == "node-feature-file-remove") return "remove the feature file on exit (true/false)";
  if (key == "metrics-listen") return "serve /metrics, /healthz, /readyz on HOST:PORT (- none)";
  if (key == "linux-system32-path") return "linux target: container dir for System32 files";
  if (key == "linux-syswow64-path") return "linux target: container dir for SysWOW64 files";
  return "";
}

po::options_description Options() {
  po::options_description desc(
      "dxshim serve [options]\n\nOptions (a --config file takes the same keys)");
  desc.add_options()("help,h", "show this help")("config", po::value<std::string>(),
                                                 "YAML configuration file")(
      "check", "check the configuration and the device source, print a summary, and exit");
  for (const auto& key : config::ServeKeys()) {
    desc.add_options()(key.c_str(), po::value<std::string>(), Describe(key));
  }
  return desc;
}

// `serve --check`: what serve would use, without listening or touching the log file. Exit 0
// when the configuration is valid and the device source can be read, 2 otherwise.
int CheckServe(const config::ServeConfig& cfg, const ProxyOptions& options) {
  std::vector<devices::Device> found;
  try {
    found = devices::MakeDeviceSource(cfg.device_source, cfg.sysfs_root)->Load();
  } catch (const std::exception& e) {
    std::cerr << "dxshim serve: device source " << cfg.device_source << ": " << e.what() << "\n";
    return 2;
  }
  std::string vm;
  for (const auto& h : cfg.vm_runtime_handlers) vm += (vm.empty() ? "" : ", ") + h;
  std::cout << "configuration ok\n"
            << "  listen   " << options.listen.ToString() << "\n"
            << "  runtime  " << options.runtime.ToString() << "\n"
            << "  devices  " << found.size() << " GPU(s) from " << cfg.device_source
            << " (before the integrated/detachable filters)\n"
            << "  target   " << config::ToString(cfg.target) << ", "
            << cfg.policy.max_containers_per_device << " pod(s) per GPU, "
            << devices::ToString(cfg.policy.placement) << "\n"
            << "  vm       " << (vm.empty() ? std::string("-") : vm)
            << " (runtime handlers whose GPU requests are refused)\n"
            << "  plugin   "
            << (cfg.device_plugin ? cfg.device_plugin_resource + " via " + cfg.device_plugin_dir
                                  : std::string("off"))
            << "\n"
            << "  labels   " << (cfg.node_feature_file.empty() ? "-" : cfg.node_feature_file)
            << "\n"
            << "  metrics  "
            << (cfg.metrics_listen.empty() ? std::string("-")
                                           : "http://" + cfg.metrics_listen + "/metrics")
            << "\n"
            << "  log      " << (cfg.log_file.empty() ? "stderr" : cfg.log_file) << "\n";
  return 0;
}

// Reads flags and the config file into `cfg` and `options`; -1 to go on, else the exit code.
int ParseServe(int argc, char** argv, config::ServeConfig& cfg, ProxyOptions& options) {
  try {
    po::variables_map vm;
    if (!ReadServeOptions(argc, argv, Options(), config::ServeKeys(), cfg, vm)) return 0;
    const bool check = vm.count("check") > 0;
    InitLogging(cfg.log_level,
                check ? LogDestination{}
                      : LogDestination{cfg.log_file, cfg.log_file_max_size, cfg.log_file_count});
    options.listen = ParseEndpoint(cfg.listen);
    options.runtime = ParseEndpoint(cfg.runtime);
    options.socket_mode = cfg.socket_mode;
    options.shutdown_grace = cfg.shutdown_grace;
    options.reconnect_backoff_max = cfg.reconnect_backoff_max;
    if (check) return CheckServe(cfg, options);
  } catch (const std::exception& e) {
    std::cerr << "dxshim serve: " << e.what() << "\n";
    return 2;
  }
  return -1;
}

// `dxshim device-plugin` with serve's settings: the child process serve runs.
std::vector<std::string> PluginArgs(const config::ServeConfig& cfg) {
  return {"device-plugin",
          "--log-level",
          cfg.log_level,
          "--device-source",
          cfg.device_source,
          "--sysfs-root",
          cfg.sysfs_root,
          "--device-refresh",
          std::to_string(cfg.device_refresh.count()) + "ms",
          "--include-integrated",
          cfg.include_integrated ? "true" : "false",
          "--include-detachable",
          cfg.include_detachable ? "true" : "false",
          "--max-containers-per-device",
          std::to_string(cfg.policy.max_containers_per_device),
          "--device-plugin-dir",
          cfg.device_plugin_dir,
          "--device-plugin-resource",
          cfg.device_plugin_resource,
          "--runtime",
          cfg.runtime,
          "--resync-interval",
          std::to_string(cfg.resync_interval.count()) + "ms"};
}

// Serves until `stop` is asked for; returns the exit code. Calls `ready` once kubelet can
// connect (the Windows service reports RUNNING then).
int Serve(const config::ServeConfig& cfg, ProxyOptions options, StopRequest& stop,
          const std::function<void()>& ready) {
#ifdef _WIN32
  // Named pipes are bridged to loopback TCP (see shim/windows/pipe_transport.h).
  std::unique_ptr<windows::PipeTransport> pipes;
  try {
    pipes = std::make_unique<windows::PipeTransport>(
        options.listen, options.runtime, cfg.pipe_sddl,
        [](const std::string& line) { spdlog::info("{}", line); },
        [](const std::string& line) { spdlog::warn("{}", line); });
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
  if (pipes->serves_pipe()) {
    options.admit_peer = [&pipes](std::string_view peer) { return pipes->Admits(peer); };
  }
#endif
  spdlog::info("{}", VersionLine());
  // Devices: one snapshot, refreshed in the background; never discovered on a request's path.
  // Which runtime files exist: noted at every read of the device source, checked at every
  // CreateContainer (a vanished one makes the interceptor re-read the source at once).
  HostFiles host_files(cfg.target);
  std::unique_ptr<devices::DeviceSnapshot> snapshot;
  try {
    snapshot = OpenDeviceSnapshot(
        cfg, [&host_files](const std::vector<devices::Device>& d) { host_files.Observe(d); });
  } catch (const std::exception& e) {
    spdlog::critical("device source: {}", e.what());
    return 2;
  }
  spdlog::info("devices: {} GPU(s) from {}, target {}, {} container(s) per GPU, {}",
               snapshot->Current()->devices.size(), cfg.device_source, ToString(cfg.target),
               cfg.policy.max_containers_per_device, ToString(cfg.policy.placement));

  devices::Allocator allocator(cfg.policy);
  // Metrics (metrics-listen): counted from the start, served just before the CRI endpoint.
  std::unique_ptr<metrics::Metrics> metrics;
  if (!cfg.metrics_listen.empty()) metrics = std::make_unique<metrics::Metrics>();
  LedgerSync ledger(options.runtime, allocator, cfg.resync_interval);
  SandboxHandlers sandbox_handlers;
  ledger.set_sandbox_handlers(&sandbox_handlers);
  GpuInterceptor::DecisionObserver on_decision;
  if (metrics) {
    ledger.set_resync_timer([m = metrics.get()](bool ok, auto took) { m->Resync(ok, took); });
    on_decision = [m = metrics.get()](DecisionOutcome outcome) { m->Decision(outcome); };
    options.observer = metrics.get();
  }
  // Read existing allocations before listening, so that GPU requests right after a restart need
  // not wait; a runtime that is down fails this at once (GPU requests then get UNAVAILABLE until
  // the background resync succeeds) and does not delay the node's CRI endpoint.
  ledger.SyncOnce(std::chrono::milliseconds(3000), /*wait_for_runtime=*/false);
  ledger.Start();
  TargetOptions target;
  target.target = cfg.target;
  target.linux_system32_path = cfg.linux_system32_path;
  target.linux_syswow64_path = cfg.linux_syswow64_path;
  target.host_file = [&host_files](const std::string& path) { return host_files.Check(path); };
  target.vm_runtime_handlers = cfg.vm_runtime_handlers;
  GpuInterceptor interceptor(*snapshot, allocator, target, &ledger, &sandbox_handlers,
                             std::move(on_decision));
  options.interceptor = &interceptor;

  // Off the relay path: kubelet's device plugin API (its own process) and the node's labels.
  std::unique_ptr<device_plugin::PluginProcess> plugin;
  if (cfg.device_plugin) {
    plugin = std::make_unique<device_plugin::PluginProcess>(PluginArgs(cfg));
    // The plugin's count follows every commit and stopped pod at once, not at its next resync.
    interceptor.set_on_holds_changed([p = plugin.get()] { p->Notify(); });
  }
  std::unique_ptr<devices::NodeFeatureFile> feature_file;
  if (!cfg.node_feature_file.empty()) {
    try {
      feature_file = std::make_unique<devices::NodeFeatureFile>(cfg.node_feature_file, *snapshot,
                                                                cfg.node_feature_file_remove);
    } catch (const std::exception& e) {
      spdlog::critical("cannot start: {}", e.what());
      return 1;
    }
  }

  // Before the relay: once the CRI endpoint answers, every endpoint dxshim serves is up (and
  // its address logged), so whoever waits for the CRI socket can scrape at once.
  std::unique_ptr<metrics::HttpEndpoint> http;
  if (metrics) {
    metrics->AddCollector([&] { return metrics::CollectNode(*snapshot, allocator); });
    metrics::HttpHandlers handlers;
    handlers.metrics = [&metrics] { return metrics->Render(); };
    handlers.not_ready = [&] {
      return metrics::NotReady(metrics->runtime_connected(), *snapshot, allocator);
    };
    try {
      http = std::make_unique<metrics::HttpEndpoint>(cfg.metrics_listen, std::move(handlers));
    } catch (const std::exception& e) {
      spdlog::critical("cannot start: {}", e.what());
      return 1;
    }
    const auto host = cfg.metrics_listen.substr(0, cfg.metrics_listen.rfind(':'));
    spdlog::info("metrics: serving http://{}:{}/metrics, /healthz and /readyz", host, http->port());
  }
  ProxyServer server(options);
  try {
    server.Start();
#ifdef _WIN32
    pipes->Listen(server.bound_port());
#endif
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
  if (plugin) plugin->Start();
  ready();
  spdlog::info("stopping: {}", stop.Wait());
  if (plugin) plugin->Stop();
  // The endpoint stops within its 0.1 s tick: alongside the relay's shutdown, not after it.
  std::thread stop_http([&http] { http.reset(); });
  server.Shutdown();
  stop_http.join();
#ifdef _WIN32
  pipes->Stop();
#endif
  return 0;
}

}  // namespace

int RunServe(int argc, char** argv) {
  config::ServeConfig cfg;
  ProxyOptions options;
  if (const int code = ParseServe(argc, argv, cfg, options); code >= 0) {
#ifdef _WIN32
    // Started by the service manager with a configuration that does not load: report it there
    // too (never RUNNING, STOPPED with this exit code as the service-specific error), instead of
    // leaving the manager to time out waiting for a service that already exited. --check and
    // --help are for a console: they skip the attempt (which takes seconds to fail under wine).
    const std::vector<std::string> args(argv, argv + argc);
    const bool console_only = std::any_of(args.begin(), args.end(), [](const std::string& a) {
      return a == "--check" || a == "--help" || a == "-h";
    });
    if (console_only) return code;
    windows::ServiceCallbacks failed;
    failed.run = [code](const std::function<void()>&) { return code; };
    failed.stop = [] {};
    bool not_a_service = false;
    const int reported = windows::RunAsService("dxshim", failed, not_a_service);
    if (!not_a_service) return reported;
#endif
    return code;
  }
  // Before any thread starts: on Linux the stop signals must be blocked in every thread.
  StopRequest stop;
#ifdef _WIN32
  windows::ServiceCallbacks service;
  service.run = [&](const std::function<void()>& ready) {
    return Serve(cfg, options, stop, ready);
  };
  service.stop = [&] { stop.Request("service stop"); };
  service.stop_wait_hint_ms = static_cast<DWORD>(cfg.shutdown_grace.count()) + 5000;
  bool not_a_service = false;
  const int code = windows::RunAsService("dxshim", service, not_a_service);
  if (!not_a_service) return code;
#endif
  return Serve(cfg, options, stop, [] {});
}

}  // namespace dxshim
