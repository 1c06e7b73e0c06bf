// Windows: the process serving a named pipe (GetNamedPipeServerProcessId, through the node
// system dxshim install proves kubelet's pipe with) and its program's name.
#include "shim/doctor/endpoint_identity.h"
#include "shim/node/kubelet_launch.h"
#include "shim/windows/windows_node_system.h"

namespace dxshim::doctor {

std::optional<ServerProcess> EndpointServer(const std::string& endpoint) {
  const auto pipe = node::PipePathOf(endpoint);
  if (pipe.rfind("\\\\.\\pipe\\", 0) != 0) return std::nullopt;
  const auto node = windows::MakeWindowsNodeSystem();
  const auto pid = node->PipeServer(pipe);
  if (!pid) return std::nullopt;
  ServerProcess server{*pid, "(a process that has ended)"};
  for (const auto& p : node->Processes()) {
    if (p.pid == *pid) server.program = node::FileNameOf(p.program);
  }
  return server;
}

}  // namespace dxshim::doctor
