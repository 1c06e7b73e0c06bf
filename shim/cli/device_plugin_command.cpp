#include "shim/cli/device_plugin_command.h"

#include <spdlog/spdlog.h>

#include <boost/program_options.hpp>
#include <iostream>
#ifdef __linux__
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#endif
#include <atomic>
#include <cstdlib>
#include <functional>
#include <thread>

#include "config/serve_config.h"
#include "devices/allocation/allocator.h"
#include "devices/device_source.h"
#include "shim/cli/logging.h"
#include "shim/cli/serve_options.h"
#include "shim/cli/stop_request.h"
#include "shim/device_plugin/device_plugin_server.h"
#include "shim/device_plugin/plugin_sockets.h"
#include "shim/gpu/ledger_sync.h"
#include "shim/proxy/endpoint.h"
#ifdef _WIN32
#include "shim/windows/pipe_transport.h"
#endif

namespace dxshim {
namespace {

namespace po = boost::program_options;

// The serve keys that decide what the plugin advertises.
const std::vector<std::string>& Keys() {
  static const std::vector<std::string> keys = {"device-source",      "sysfs-root",
                                                "device-refresh",     "include-integrated",
                                                "include-detachable", "max-containers-per-device",
                                                "device-plugin-dir",  "device-plugin-resource",
                                                "log-level",          "runtime",
                                                "resync-interval"};
  return keys;
}

// Calls `changed` for each batch of bytes on the process's stdin until its end (serve closed it:
// returns true) or `stopping` (checked every 250 ms).
bool WaitForNotifications(const std::atomic<bool>& stopping, const std::function<void()>& changed) {
  char bytes[256];
#ifdef _WIN32
  // An anonymous pipe: PeekNamedPipe says what waits without blocking, and the end of the pipe.
  const HANDLE input = GetStdHandle(STD_INPUT_HANDLE);
  while (!stopping) {
    DWORD waiting = 0;
    if (!PeekNamedPipe(input, nullptr, 0, nullptr, &waiting, nullptr)) {
      return GetLastError() == ERROR_BROKEN_PIPE;
    }
    if (waiting == 0) {
      Sleep(250);
      continue;
    }
    DWORD n = 0;
    if (!ReadFile(input, bytes, sizeof bytes, &n, nullptr) || n == 0) return true;
    changed();
  }
#else
  while (!stopping) {
    pollfd p{0, POLLIN, 0};
    const int ready = ::poll(&p, 1, 250);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return false;
    if (ready == 0) continue;
    const auto n = ::read(0, bytes, sizeof bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    changed();
  }
#endif
  return false;
}

// DXSHIM_PLUGIN_SOCKETS (tests), else the platform's way. Throws std::invalid_argument.
device_plugin::PluginSockets ChosenPluginSockets() {
  const char* named = std::getenv(device_plugin::kPluginSocketsVariable);
  if (!named || !*named) return device_plugin::DefaultPluginSockets();
  const auto sockets = device_plugin::ParsePluginSockets(named);
  if (!sockets) {
    throw std::invalid_argument(std::string(device_plugin::kPluginSocketsVariable) + "='" + named +
                                "': expected grpc-unix, bridged-unix or tcp-stand-in");
  }
#ifdef _WIN32
  if (*sockets == device_plugin::PluginSockets::kGrpcUnix) {
    throw std::invalid_argument(std::string(device_plugin::kPluginSocketsVariable) +
                                "=grpc-unix: gRPC has no unix sockets on Windows");
  }
#endif
  return *sockets;
}

}  // namespace

int RunDevicePlugin(int argc, char** argv) {
  po::options_description desc(
      "dxshim device-plugin [options]\n\nkubelet's device plugin for dxshim's GPUs (dxshim "
      "serve runs it itself)\n\nOptions (a --config file of dxshim serve is read for the same "
      "keys)");
  desc.add_options()("help,h", "show this help")("config", po::value<std::string>(),
                                                 "dxshim serve's YAML configuration file")(
      "parent-pid", po::value<long>(),
      "run as dxshim serve's child: log '<level> <message>' lines for it to pass on, and stop "
      "when that process is gone");
  for (const auto& key : Keys()) {
    desc.add_options()(key.c_str(), po::value<std::string>(), "as for serve");
  }
  config::ServeConfig cfg;
  long parent = 0;
  device_plugin::PluginSockets sockets{};
  try {
    sockets = ChosenPluginSockets();
    po::variables_map vm;
    if (!ReadServeOptions(argc, argv, desc, Keys(), cfg, vm)) return 0;
    if (vm.count("parent-pid")) parent = vm["parent-pid"].as<long>();
#ifdef __linux__
    if (parent > 0) {
      // Stop when serve goes, even by SIGKILL. Serve may already be gone (the signal only covers
      // a death after this call): then getppid() is no longer its pid.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (static_cast<long>(::getppid()) != parent) return 0;
    }
#endif
    InitLogging(cfg.log_level);
    if (parent > 0) spdlog::set_pattern("%l %v");
  } catch (const std::exception& e) {
    std::cerr << "dxshim device-plugin: " << e.what() << "\n";
    return 2;
  }
  StopRequest stop;  // before any thread
  std::unique_ptr<devices::DeviceSnapshot> snapshot;
  try {
    snapshot = OpenDeviceSnapshot(cfg);
  } catch (const std::exception& e) {
    spdlog::critical("device plugin: device source: {}", e.what());
    return 2;
  }
  device_plugin::DevicePluginOptions options;
  options.dir = cfg.device_plugin_dir;
  options.resource_name = cfg.device_plugin_resource;
  options.slots_per_gpu = cfg.policy.max_containers_per_device;
  options.sockets = sockets;
  device_plugin::DevicePluginServer server(options, *snapshot);
  // The same record of the runtime serve's ledger is rebuilt from: the slots that pods the
  // scheduler does not count hold (annotation-only, exclusive) are advertised as Unhealthy.
  devices::Allocator ledger(cfg.policy);
  std::unique_ptr<LedgerSync> sync;
#ifdef _WIN32
  // containerd's named pipe, reached as serve reaches it: through a forwarder on loopback that
  // only this process may use. Nothing is listened on here.
  std::unique_ptr<windows::PipeTransport> pipes;
#endif
  try {
    auto runtime = ParseEndpoint(cfg.runtime);
#ifdef _WIN32
    Endpoint no_listen{Endpoint::Kind::kTcp, ""};
    pipes = std::make_unique<windows::PipeTransport>(
        no_listen, runtime, "", [](const std::string& line) { spdlog::debug("{}", line); },
        [](const std::string& line) { spdlog::warn("device plugin: {}", line); });
#endif
    sync = std::make_unique<LedgerSync>(
        runtime, ledger, cfg.resync_interval,
        [&server](const devices::RuntimeRecord& record) { server.SetRecord(record); },
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
  server.Start();
  const auto why = stop.Wait();
  spdlog::debug("device plugin: stopping: {}", why);
  stopping = true;
  if (notifications.joinable()) notifications.join();
  sync.reset();
  server.Stop();
  return 0;
}

}  // namespace dxshim
