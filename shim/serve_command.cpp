#include "shim/serve_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "config/serve_config.h"
#include "shim/logging.h"
#include "shim/proxy_server.h"

namespace dxshim {
namespace {

namespace po = boost::program_options;

const char* Describe(const std::string& key) {
  if (key == "listen") return "endpoint kubelet connects to (unix:///path, /path, tcp://host:port)";
  if (key == "runtime") return "runtime endpoint to relay to (containerd)";
  if (key == "socket-mode") return "file mode of the listening unix socket (octal)";
  if (key == "log-level") return "trace, debug, info, warn, error, critical or off";
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
  if (key == "narrow-class-devices") return "narrow a class/<GUID> device to one GPU";
  if (key == "linux-system32-path") return "linux target: container dir for System32 files";
  if (key == "linux-syswow64-path") return "linux target: container dir for SysWOW64 files";
  return "";
}

po::options_description Options() {
  po::options_description desc(
      "dxshim serve [options]\n\nOptions (a --config file takes the same keys)");
  desc.add_options()("help,h", "show this help")("config", po::value<std::string>(),
                                                 "YAML configuration file");
  for (const auto& key : config::ServeKeys()) {
    desc.add_options()(key.c_str(), po::value<std::string>(), Describe(key));
  }
  return desc;
}

}  // namespace

int RunServe(int argc, char** argv) {
  config::ServeConfig cfg;
  ProxyOptions options;
  try {
    const auto desc = Options();
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    if (vm.count("help")) {
      std::cout << desc << "\n";
      return 0;
    }
    if (vm.count("config")) config::ApplyServeConfigFile(cfg, vm["config"].as<std::string>());
    for (const auto& key : config::ServeKeys()) {
      if (vm.count(key)) config::ApplyServeKey(cfg, key, vm[key].as<std::string>(), "--" + key);
    }
    InitLogging(cfg.log_level);
    options.listen = ParseEndpoint(cfg.listen);
    options.runtime = ParseEndpoint(cfg.runtime);
    options.socket_mode = static_cast<mode_t>(cfg.socket_mode);
    options.shutdown_grace = cfg.shutdown_grace;
    options.reconnect_backoff_max = cfg.reconnect_backoff_max;
  } catch (const std::exception& e) {
    std::cerr << "dxshim serve: " << e.what() << "\n";
    return 2;
  }

  // Signals are taken synchronously by this thread; every thread gRPC starts inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  ProxyServer server(options);
  try {
    server.Start();
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("received {}", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  server.Shutdown();
  return 0;
}

}  // namespace dxshim
