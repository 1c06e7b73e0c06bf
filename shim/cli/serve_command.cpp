#include "shim/cli/serve_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "config/device_snapshot_config.h"
#include "config/serve_config.h"
#include "config/serve_config_keys.h"
#include "config/serve_option_table.h"
#include "devices/allocation/gpu_memory.h"
#include "devices/device_source.h"
#include "devices/node_feature_file.h"
#include "shim/base/comma_list.h"
#include "shim/cli/logging.h"
#include "shim/cli/node_status_answer.h"
#include "shim/cli/platform.h"
#include "shim/cli/plugin_start.h"
#include "shim/cli/serve_command_line.h"
#include "shim/cli/serve_metrics.h"
#include "shim/cli/stop_request.h"
#include "shim/device_plugin/plugin_process.h"
#include "shim/gpu/configured_target.h"
#include "shim/gpu/gpu_interceptor.h"
#include "shim/gpu/host_files.h"
#include "shim/gpu/ledger_feed.h"
#include "shim/ledger/ledger.h"
#include "shim/proxy/proxy_server.h"
#include "shim/runtime_record/runtime_record_poller.h"
#include "shim/version/build_info.h"

namespace dxshim {
namespace {

// "default capacity/8 per shared pod, 0B kept for the host": how GPU memory is shared.
std::string MemoryPolicy(const devices::AllocationPolicy& policy) {
  const auto per_pod = policy.default_gpu_memory
                           ? devices::FormatBytes(policy.default_gpu_memory)
                           : "capacity/" + std::to_string(policy.max_containers_per_device);
  return "default " + per_pod + " per shared pod, " +
         devices::FormatBytes(policy.gpu_memory_reserved) + " kept for the host";
}

namespace po = boost::program_options;

po::options_description Options() {
  auto desc = ServeFlags("dxshim serve [options]");
  desc.add_options()("check",
                     "check the configuration and the device source, print a summary, and exit");
  return desc;
}

// `serve --check`: what serve would use, without listening or touching the log file. Exit 0
// when the configuration is valid and the device source can be read, 2 otherwise.
int CheckServe(const config::ServeConfig& cfg, const ProxyOptions& options) {
  std::vector<devices::Device> found;
  try {
    found = config::DeviceSourceOf(cfg)->Load();
  } catch (const std::exception& e) {
    std::cerr << "dxshim serve: device source " << cfg.device_source << ": " << e.what() << "\n";
    return 2;
  }
  const std::string vm = JoinList(cfg.vm_runtime_handlers, ", ");
  std::cout << "configuration ok\n"
            << "  listen   " << options.listen.ToString() << "\n"
            << "  runtime  " << options.runtime.ToString() << "\n"
            << "  devices  " << found.size() << " GPU(s) from " << cfg.device_source
            << " (before the integrated/detachable filters)\n"
            << "  target   " << config::ToString(cfg.target) << ", "
            << cfg.policy.max_containers_per_device << " pod(s) per GPU, "
            << devices::ToString(cfg.policy.spread_or_pack) << "\n"
            << "  memory   " << MemoryPolicy(cfg.policy) << "\n"
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

// Runs `start`; false, logged as why dxshim cannot start, when it throws.
bool Started(const std::function<void()>& start) {
  try {
    start();
    return true;
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return false;
  }
}

// Kubelet's device plugin API in a process of its own, off the relay path (null when the
// configuration turns it off). Its count follows every commit and stopped pod at once, not at
// its next resync.
std::unique_ptr<device_plugin::PluginProcess> PluginFor(const config::ServeConfig& cfg,
                                                        GpuInterceptor& interceptor) {
  if (!cfg.device_plugin) return nullptr;
  auto plugin = std::make_unique<device_plugin::PluginProcess>(config::PluginArgs(cfg));
  interceptor.set_on_holds_changed([p = plugin.get()] { p->Notify(); });
  return plugin;
}

// Serves until `stop` is asked for; returns the exit code. Calls `ready` once kubelet can
// connect (the Windows service reports RUNNING then).
int Serve(const config::ServeConfig& cfg, ProxyOptions options, StopRequest& stop,
          const std::function<void()>& ready) {
  // Metrics (metrics-listen): counted from the start, served just before the CRI endpoint.
  std::unique_ptr<ServeMetrics> metrics;
  if (!cfg.metrics_listen.empty()) metrics = std::make_unique<ServeMetrics>();
  // Who makes CRI calls through kubelet's pipe, which dxshim answers itself (dxshim install's
  // proof that the running kubelet talks to dxshim).
  CriCallers cri_callers;
  options.local_methods = NodeStatusMethods(cri_callers);
  std::unique_ptr<PipeBridges> pipes;  // after metrics: its accept thread counts clients there
  std::function<void(const std::string&)> on_pipe_client;
  if (metrics)
    on_pipe_client = [m = metrics.get()](const std::string& p) { m->relay.PipeClient(p); };
  if (!Started([&] {
        pipes = PipeBridges::ForServe(options, cfg.pipe_sddl, on_pipe_client, &cri_callers);
      })) {
    return 1;
  }
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
  spdlog::info("devices: {} GPU(s) from {}, target {}, {} pod(s) per GPU, {}; GPU memory: {}",
               snapshot->Current()->devices.size(), cfg.device_source, ToString(cfg.target),
               cfg.policy.max_containers_per_device, ToString(cfg.policy.spread_or_pack),
               MemoryPolicy(cfg.policy));

  Ledger ledger(cfg.policy);
  SandboxHandlers sandbox_handlers;
  RuntimeRecordPoller poller(options.runtime, cfg.resync_interval,
                             FeedLedger(ledger, &sandbox_handlers));
  GpuInterceptor::DecisionObserver on_decision;
  if (metrics) {
    poller.set_resync_timer(
        [m = metrics.get()](bool ok, auto took) { m->resyncs.Resync(ok, took); });
    on_decision = [m = metrics.get()](DecisionOutcome outcome) { m->decisions.Count(outcome); };
    options.observer = &metrics->relay;
  }
  // Read existing allocations before listening, so that GPU requests right after a restart need
  // not wait; a runtime that is down fails this at once (GPU requests then get UNAVAILABLE until
  // the background resync succeeds) and does not delay the node's CRI endpoint.
  poller.SyncOnce(std::chrono::milliseconds(3000), /*wait_for_runtime=*/false);
  poller.Start();
  GpuInterceptor interceptor(
      *snapshot, ledger,
      ConfiguredTarget(cfg,
                       [&host_files](const std::string& path) { return host_files.Check(path); }),
      &poller, &sandbox_handlers, std::move(on_decision));
  options.interceptor = &interceptor;

  // Off the relay path: kubelet's device plugin API and the node's labels.
  const auto plugin = PluginFor(cfg, interceptor);
  PluginStart plugin_start(plugin.get(), cri_callers,
                           cfg.device_plugin_after_kubelet && pipes->KnowsCallers());
  std::unique_ptr<devices::NodeFeatureFile> feature_file;
  std::unique_ptr<admin::HttpEndpoint> http;
  ProxyServer server(options);
  const bool started = Started([&] {
    if (!cfg.node_feature_file.empty()) {
      feature_file = std::make_unique<devices::NodeFeatureFile>(cfg.node_feature_file, *snapshot,
                                                                cfg.node_feature_file_remove);
    }
    // Before the relay: once the CRI endpoint answers, every endpoint dxshim serves is up (and
    // its address logged), so whoever waits for the CRI socket can scrape at once.
    if (metrics) http = ServeMetricsEndpoint(cfg.metrics_listen, *metrics, *snapshot, ledger);
    server.Start();
    pipes->Listen(server.Handoff());
  });
  if (!started) return 1;
  plugin_start.Begin();
  ready();
  spdlog::info("stopping: {}", stop.Wait());
  plugin_start.Stop();
  // The endpoint stops within its 0.1 s tick: alongside the relay's shutdown, not after it.
  std::thread stop_http([&http] { http.reset(); });
  server.Shutdown();
  stop_http.join();
  pipes->Stop();
  return 0;
}

}  // namespace

int RunServe(int argc, char** argv) {
  config::ServeConfig cfg;
  ProxyOptions options;
  if (const int code = ParseServe(argc, argv, cfg, options); code >= 0) {
    return ReportFailedStart(code, std::vector<std::string>(argv, argv + argc));
  }
  // Before any thread starts: on Linux the stop signals must be blocked in every thread.
  StopRequest stop;
  return RunServeProcess(
      [&](const std::function<void()>& ready) { return Serve(cfg, options, stop, ready); },
      [&] { stop.Request("service stop"); }, cfg.shutdown_grace + std::chrono::milliseconds(5000));
}

}  // namespace dxshim
