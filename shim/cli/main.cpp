// dxshim: a CRI proxy that gives GPUs to Windows containers. See README.md.
#include <cstdio>
#include <iostream>
#include <string_view>

#include "shim/cli/device_plugin_command.h"
#include "shim/cli/devices_command.h"
#include "shim/cli/doctor_command.h"
#include "shim/cli/install_command.h"
#include "shim/cli/platform.h"
#include "shim/cli/rewrite_command.h"
#include "shim/cli/serve_command.h"
#include "shim/version/build_info.h"

namespace {

constexpr std::string_view kUsage = R"(usage: dxshim <command> [options]

commands:
  serve     run the CRI proxy between kubelet and the container runtime
  devices   list the node's GPUs (table, YAML, JSON or node labels)
  device-plugin  kubelet's device plugin for the GPUs alone (serve runs it itself)
  rewrite   show how a container config (crictl JSON) would be rewritten for its pod
  doctor    check this node's GPU path (dxshim, containerd, kubelet, plugin, GPUs) and say what to fix
  install   put dxshim between this Windows node's kubelet and containerd (and prove it)
  uninstall undo what install changed
  version   print the version, the git commit and the platform
  help      show this text

`dxshim <command> --help` describes a command's options.
)";

}  // namespace

int main(int argc, char** argv) {
  dxshim::UseBinaryStandardStreams();  // '\n' on every platform (shim/cli/platform.h)
  const std::string_view command = argc > 1 ? argv[1] : "";
  if (command == "serve") return dxshim::RunServe(argc - 1, argv + 1);
  if (command == "devices") return dxshim::RunDevices(argc - 1, argv + 1);
  if (command == "device-plugin") return dxshim::RunDevicePlugin(argc - 1, argv + 1);
  if (command == "rewrite") return dxshim::RunRewrite(argc - 1, argv + 1);
  if (command == "doctor") return dxshim::RunDoctor(argc - 1, argv + 1);
  if (command == "install") return dxshim::RunInstall(argc - 1, argv + 1);
  if (command == "uninstall") return dxshim::RunUninstall(argc - 1, argv + 1);
  // Hidden: the child in which Windows discovery asks CUDA and NVML (shim/cli/platform.h).
  if (command == "nvidia-uuids") return dxshim::RunNvidiaUuids({argv + 2, argv + argc});
  if (command == "version" || command == "--version") {
    std::cout << dxshim::VersionLine() << "\n";
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << (command.empty() ? "dxshim: no command given\n"
                                : "dxshim: unknown command '" + std::string(command) + "'\n")
            << kUsage;
  return 2;
}
