#include "shim/cli/device_plugin_command.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "config/serve_config.h"
#include "config/serve_option_table.h"
#include "devices/device_source.h"
#include "shim/cli/logging.h"
#include "shim/cli/platform.h"
#include "shim/cli/serve_command_line.h"
#include "shim/cli/stop_request.h"
#include "shim/device_plugin/device_plugin_server.h"
#include "shim/device_plugin/plugin_memory_units.h"
#include "shim/device_plugin/plugin_slots.h"
#include "shim/device_plugin/plugin_sockets.h"
#include "shim/install/kubelet/kubelet_checkpoint.h"
#include "shim/proxy/endpoint.h"
#include "shim/runtime_record/runtime_record_poller.h"

namespace dxshim {
namespace {

namespace po = boost::program_options;

po::options_description Options() {
  po::options_description desc(
      "dxshim device-plugin [options]\n\nkubelet's device plugin for dxshim's GPUs (dxshim "
      "serve runs it itself)\n\nOptions (a --config file of dxshim serve is read for the same "
      "keys)");
  desc.add_options()("help,h", "show this help")("config", po::value<std::string>(),
                                                 "dxshim serve's YAML configuration file")(
      "parent-pid", po::value<long>(),
      "run as dxshim serve's child: log '<level> <message>' lines for it to pass on, and stop "
      "when that process is gone");
  for (const auto& key : config::PluginKeys()) {
    const auto* option = config::FindServeOption(key);
    desc.add_options()(option->key, po::value<std::string>()->value_name(option->type),
                       config::HelpText(*option).c_str());
  }
  return desc;
}

// Reads flags and the config file into `cfg`, the parent's pid (0: none) and how the plugin's
// sockets are made; -1 to go on, else the exit code.
int ParseDevicePlugin(int argc, char** argv, config::ServeConfig& cfg, long& parent,
                      device_plugin::PluginSockets& sockets) {
  try {
    sockets = device_plugin::ChosenPluginSockets();
    po::variables_map vm;
    if (!ReadServeOptions(argc, argv, Options(), config::PluginKeys(), cfg, vm)) return 0;
    if (vm.count("parent-pid")) parent = vm["parent-pid"].as<long>();
    if (parent > 0 && !FollowParent(parent)) return 0;  // serve is already gone
    InitLogging(cfg.log_level);
    if (parent > 0) spdlog::set_pattern("%l %v");
  } catch (const std::exception& e) {
    std::cerr << "dxshim device-plugin: " << e.what() << "\n";
    return 2;
  }
  return -1;
}

using Servers = std::vector<std::unique_ptr<device_plugin::DevicePluginServer>>;

// The same record of the runtime serve's ledger is rebuilt from, for every resource: the slots
// and memory units that pods the scheduler does not count hold (annotation-only, exclusive, the
// other resource's) are advertised as Unhealthy.
RuntimeRecordPoller::Consumer FeedRecord(const Servers& servers) {
  RuntimeRecordPoller::Consumer feed;
  feed.listed = [&servers](const RuntimeRecordPoller::Listing& listing) {
    for (const auto& server : servers) server->SetRecord(listing.record);
    return HoldingPods(listing.record);
  };
  return feed;
}

// A server per resource: pod slots (device-plugin-resource), and memory units
// (device-plugin-memory-resource) unless that is empty, each on its own socket.
Servers MakeServers(const config::ServeConfig& cfg, device_plugin::PluginSockets sockets,
                    const devices::DeviceSnapshot& snapshot) {
  Servers servers;
  device_plugin::DevicePluginOptions options;
  options.dir = cfg.device_plugin_dir;
  options.sockets = sockets;
  options.resource_name = cfg.device_plugin_resource;
  options.endpoint = device_plugin::kSlotsEndpoint;
  servers.push_back(std::make_unique<device_plugin::DevicePluginServer>(
      options, snapshot,
      std::make_unique<device_plugin::PluginSlots>(cfg.policy.max_containers_per_device)));
  if (cfg.device_plugin_memory_resource.empty()) return servers;
  if (cfg.device_plugin_memory_resource == cfg.device_plugin_resource) {
    // Kubelet keeps one plugin per resource name: the second registration would replace the
    // first.
    spdlog::error(
        "device plugin: device-plugin-memory-resource names {}, the slots' resource too; the "
        "memory resource is not registered",
        cfg.device_plugin_resource);
    return servers;
  }
  options.resource_name = cfg.device_plugin_memory_resource;
  options.endpoint = device_plugin::kMemoryEndpoint;
  servers.push_back(std::make_unique<device_plugin::DevicePluginServer>(
      options, snapshot,
      std::make_unique<device_plugin::PluginMemoryUnits>(
          cfg.policy,
          (std::filesystem::path(cfg.device_plugin_dir) / install::kKubeletCheckpoint).string(),
          cfg.device_plugin_memory_resource, cfg.device_plugin_resource)));
  return servers;
}

}  // namespace

int RunDevicePlugin(int argc, char** argv) {
  config::ServeConfig cfg;
  long parent = 0;
  device_plugin::PluginSockets sockets{};
  if (const int code = ParseDevicePlugin(argc, argv, cfg, parent, sockets); code >= 0) {
    return code;
  }
  StopRequest stop;  // before any thread
  std::unique_ptr<devices::DeviceSnapshot> snapshot;
  try {
    snapshot = OpenDeviceSnapshot(cfg);
  } catch (const std::exception& e) {
    spdlog::critical("device plugin: device source: {}", e.what());
    return 2;
  }
  const auto servers = MakeServers(cfg, sockets, *snapshot);
  std::unique_ptr<RuntimeRecordPoller> sync;
  std::unique_ptr<PipeBridges> pipes;
  try {
    auto runtime = ParseEndpoint(cfg.runtime);
    pipes = PipeBridges::ForDialing(runtime);
    sync = std::make_unique<RuntimeRecordPoller>(runtime, cfg.resync_interval, FeedRecord(servers),
                                                 "device plugin: runtime record");
  } catch (const std::exception& e) {
    spdlog::critical("device plugin: runtime {}: {}", cfg.runtime, e.what());
    return 2;
  }
  sync->SyncOnce(std::chrono::milliseconds(3000), /*wait_for_runtime=*/false);
  sync->Start();
  // As serve's child: serve writes to our stdin whenever who holds GPUs changed (a commit, a
  // stopped or removed pod), and the record is read again at once instead of at the next
  // resync, which stays as the net for what passes behind dxshim's back. Serve closes it to
  // stop us (and it closes when serve is gone).
  std::atomic<bool> stopping{false};
  std::thread notifications;
  if (parent > 0) {
    notifications = std::thread([&] {
      if (WaitForNotifications(stopping, [&sync] { sync->Kick(); })) {
        stop.Request("dxshim serve closed the plugin's input");
      }
    });
  }
  for (const auto& server : servers) server->Start();
  const auto why = stop.Wait();
  spdlog::debug("device plugin: stopping: {}", why);
  stopping = true;
  if (notifications.joinable()) notifications.join();
  sync.reset();
  for (const auto& server : servers) server->Stop();
  return 0;
}

}  // namespace dxshim
