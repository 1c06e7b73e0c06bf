// What containerd makes of its config.toml and flags: the gRPC and TTRPC addresses it serves and
// its root folder, by containerd's rules for each config version.
#pragma once

#include <optional>
#include <string>

namespace dxshim::test::node_standin {

struct ContainerdServerConfig {
  long version = 0;           // the file's top-level `version` (0: none)
  std::string grpc_address;   // as written (slashes or backslashes), not yet a pipe path
  std::string ttrpc_address;  // what containerd hands its shims as TTRPC_ADDRESS
  std::string root;
};

// The addresses and root of a containerd started with config text TOML (nothing: no config
// file), --address ADDRESS_FLAG and --root ROOT_FLAG, DEFAULT_ADDRESS and DEFAULT_ROOT being
// containerd's defaults for the platform (defaults/defaults_windows.go: the pipe
// containerd-containerd, %ProgramData%\containerd\root). Nothing, with ERROR, when containerd
// would refuse to start. Rules (containerd v1.6.39 and v1.7.34 cmd/containerd/command/main.go,
// v2.3.4 cmd/containerd/server/config/config.go serviceMigrate, server.go and
// plugins/server/ttrpc/plugin.go):
//   version 1 to 3 (or none): gRPC at [grpc] address (an empty one is refused: "grpc address
//     cannot be empty"); TTRPC at [ttrpc] address, or when that is empty the gRPC address +
//     ".ttrpc";
//   version 4: gRPC at [plugins."io.containerd.server.v1.grpc"] address; TTRPC at
//     [plugins."io.containerd.server.v1.ttrpc"] address, or the DEFAULT address + ".ttrpc"
//     (never derived from a custom gRPC address); the top-level [grpc] and [ttrpc] are ignored;
//   --address replaces the gRPC address, and the derived TTRPC address with it (in version 4
//   only when there is no ttrpc plugin table); root: --root, else top-level `root`, else
//   DEFAULT_ROOT.
std::optional<ContainerdServerConfig> ContainerdServer(
    const std::optional<std::string>& toml, const std::optional<std::string>& address_flag,
    const std::optional<std::string>& root_flag, const std::string& default_address,
    const std::string& default_root, std::string& error);

}  // namespace dxshim::test::node_standin
