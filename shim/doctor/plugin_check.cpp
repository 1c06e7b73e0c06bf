#include "shim/doctor/plugin_check.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "shim/base/comma_list.h"
#include "shim/device_plugin/device_plugin_server.h"
#include "shim/device_plugin/device_plugin_service.h"
#include "shim/device_plugin/socket_file_channel.h"
#include "shim/install/kubelet/kubelet_checkpoint.h"
#include "shim/socket_bridge/socket_file.h"

namespace dxshim::doctor {
namespace {

using device_plugin::PluginSockets;
using install::kKubeletCheckpoint;
using install::RegisteredDevices;

struct Advertised {
  std::set<std::string> healthy;
  std::size_t all = 0;
};

// The plugin's first ListAndWatch list; false with `error` set when it does not answer.
bool AskPlugin(const std::string& socket, PluginSockets sockets, std::chrono::milliseconds timeout,
               Advertised& out, std::string& error) {
  device_plugin::SocketFileChannel channel(socket, sockets, "doctor");
  const auto target = channel.Target(error);
  if (target.empty()) return false;
  auto stub = v1beta1::DevicePlugin::NewStub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  context.AddMetadata(device_plugin::kObserverMetadata, "dxshim doctor");
  auto reader = stub->ListAndWatch(&context, v1beta1::Empty());
  v1beta1::ListAndWatchResponse list;
  if (!reader->Read(&list)) {
    context.TryCancel();
    const auto status = reader->Finish();
    error = status.error_message().empty() ? "its ListAndWatch stream ended without a list"
                                           : status.error_message();
    return false;
  }
  context.TryCancel();
  reader->Finish();
  out.all = static_cast<std::size_t>(list.devices_size());
  for (const auto& d : list.devices()) {
    if (d.health() == "Healthy") out.healthy.insert(d.id());
  }
  return true;
}

Check CheckResource(const std::string& dir, const std::string& resource,
                    const std::string& endpoint, PluginSockets sockets,
                    std::chrono::milliseconds timeout) {
  const std::string check = "device plugin " + resource;
  const auto kubelet_sock = (std::filesystem::path(dir) / "kubelet.sock").string();
  // Read without following the reparse point an AF_UNIX socket file is on Windows.
  const auto kubelet = socket_bridge::IdentifyFile(kubelet_sock);
  if (!kubelet.exists) {
    return Failed(check,
                  "there is no kubelet.sock in " + dir +
                      ": kubelet does not serve its device "
                      "plugins there",
                  "start kubelet, or set device-plugin-dir to its device plugin folder "
                  "(C:\\var\\lib\\kubelet\\device-plugins, /var/lib/kubelet/device-plugins)");
  }
  const auto socket = device_plugin::ServedSocket(dir, endpoint, sockets);
  if (socket.empty()) {
    return Failed(check, "no socket of dxshim's plugin in " + dir,
                  "dxshim serves the plugin once kubelet.sock exists in device-plugin-dir: "
                  "read dxshim's log (its \"device plugin:\" lines); is dxshim running?");
  }
  Advertised advertised;
  std::string error;
  if (!AskPlugin(socket, sockets, timeout, advertised, error)) {
    return Failed(check, "the plugin does not answer on " + socket + ": " + error,
                  "restart dxshim, whose child the plugin is (Windows: dxshim.exe install "
                  "--restart-service, which leaves kubelet running; Linux: systemctl restart "
                  "dxshim), and read its log");
  }
  const auto checkpoint_path = (std::filesystem::path(dir) / kKubeletCheckpoint).string();
  std::ifstream in(checkpoint_path, std::ios::binary);
  if (!in) {
    return Failed(check, "kubelet has not registered it: there is no " + checkpoint_path,
                  "kubelet writes it when a plugin registers: check that kubelet runs with "
                  "this device plugin folder, and its log for \"" +
                      resource + "\"");
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::map<std::string, std::vector<std::string>> registered;
  try {
    registered = RegisteredDevices(text.str());
  } catch (const std::exception& e) {
    return Failed(check, checkpoint_path + " cannot be read: " + e.what(),
                  "kubelet rewrites it at its next device update; restart kubelet if it stays");
  }
  const auto entry = registered.find(resource);
  if (entry == registered.end()) {
    const std::string others =
        JoinList(registered, ", ", [](const auto& plugin) { return plugin.first; });
    return Failed(check,
                  "kubelet has not registered it (its checkpoint lists " +
                      (others.empty() ? std::string("no resource") : others) +
                      "), so the scheduler sees no " + resource + " capacity on this node",
                  "read dxshim's log (\"device plugin:\" lines) and kubelet's for why the "
                  "registration failed; dxshim registers again whenever kubelet restarts");
  }
  const std::string counts = std::to_string(advertised.healthy.size()) + " healthy of " +
                             std::to_string(advertised.all) + " advertised";
  // kubelet rewrites its checkpoint at each list it takes, never when it stops or starts: one
  // last written before kubelet.sock was made is a previous kubelet's.
  const auto checkpoint = socket_bridge::IdentifyFile(checkpoint_path);
  if (checkpoint.exists && checkpoint.modified < kubelet.created) {
    return Warning(check,
                   socket + " serves " + counts +
                       ", but kubelet's checkpoint is older than "
                       "its kubelet.sock: the kubelet running now has not taken a list from it",
                   "dxshim registers with a new kubelet within seconds; if this stays, read "
                   "dxshim's log (\"device plugin:\" lines) and kubelet's");
  }
  const std::set<std::string> registered_ids(entry->second.begin(), entry->second.end());
  if (registered_ids != advertised.healthy) {
    return Warning(check,
                   socket + " serves " + counts + ", but kubelet's checkpoint has " +
                       std::to_string(registered_ids.size()) + " healthy, not the same ones",
                   "kubelet follows within seconds of a change; if this stays, restart "
                   "kubelet, and dxshim registers again");
  }
  return Ok(check, socket + " serves " + counts + "; kubelet has them registered");
}

}  // namespace

Checks CheckDevicePlugin(const config::ServeConfig& cfg, std::chrono::milliseconds timeout) {
  if (!cfg.device_plugin) {
    return {Ok("device plugin",
               "off (device-plugin false): pods ask for GPUs by annotation "
               "only, and the scheduler counts none")};
  }
  PluginSockets sockets;
  try {
    sockets = device_plugin::ChosenPluginSockets();
  } catch (const std::exception& e) {
    return {Failed("device plugin", e.what(), "unset the variable")};
  }
  Checks checks;
  checks.push_back(CheckResource(cfg.device_plugin_dir, cfg.device_plugin_resource,
                                 device_plugin::kSlotsEndpoint, sockets, timeout));
  if (!cfg.device_plugin_memory_resource.empty()) {
    checks.push_back(CheckResource(cfg.device_plugin_dir, cfg.device_plugin_memory_resource,
                                   device_plugin::kMemoryEndpoint, sockets, timeout));
  }
  return checks;
}

}  // namespace dxshim::doctor
