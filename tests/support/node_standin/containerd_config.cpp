// containerd's gRPC and TTRPC addresses and root per config version (see containerd_config.h).
#include "tests/support/node_standin/containerd_config.h"

#include <cstdlib>

#include "tests/support/node_standin/toml_lines.h"

namespace dxshim::test::node_standin {

std::optional<ContainerdServerConfig> ContainerdServer(
    const std::optional<std::string>& toml, const std::optional<std::string>& address_flag,
    const std::optional<std::string>& root_flag, const std::string& default_address,
    const std::string& default_root, std::string& error) {
  const std::string text = toml.value_or("");
  const auto value = [&text](const TomlTable& table, const std::string& key) {
    return TomlValue(text, table, key);
  };
  ContainerdServerConfig config;
  config.version = std::strtol(value({}, "version").value_or("0").c_str(), nullptr, 10);
  config.root = root_flag.value_or(value({}, "root").value_or(default_root));
  if (config.version >= 4) {
    const TomlTable grpc = {"plugins", "io.containerd.server.v1.grpc"};
    const TomlTable ttrpc = {"plugins", "io.containerd.server.v1.ttrpc"};
    const std::string grpc_address = value(grpc, "address").value_or("");
    const std::string ttrpc_address = value(ttrpc, "address").value_or("");
    config.grpc_address =
        address_flag.value_or(grpc_address.empty() ? default_address : grpc_address);
    if (!ttrpc_address.empty()) {
      config.ttrpc_address = ttrpc_address;
    } else if (address_flag && !TomlHasTable(text, ttrpc)) {
      config.ttrpc_address = *address_flag + ".ttrpc";
    } else {
      config.ttrpc_address = default_address + ".ttrpc";
    }
    return config;
  }
  config.grpc_address = address_flag.value_or(value({"grpc"}, "address").value_or(default_address));
  if (config.grpc_address.empty()) {
    error = "grpc address cannot be empty";
    return std::nullopt;
  }
  const std::string ttrpc_address = value({"ttrpc"}, "address").value_or("");
  config.ttrpc_address = ttrpc_address.empty() ? config.grpc_address + ".ttrpc" : ttrpc_address;
  return config;
}

}  // namespace dxshim::test::node_standin
