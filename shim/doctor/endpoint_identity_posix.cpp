// Linux: the credentials the listening process left on its unix socket (SO_PEERCRED of a
// connection to it: the process that called listen), and its name from /proc.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "shim/doctor/endpoint_identity.h"
#include "shim/proxy/endpoint.h"

namespace dxshim::doctor {

std::optional<ServerProcess> EndpointServer(const std::string& endpoint) {
  Endpoint parsed;
  try {
    parsed = ParseEndpoint(endpoint);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (parsed.kind != Endpoint::Kind::kUnix) return std::nullopt;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (parsed.address.size() >= sizeof address.sun_path) return std::nullopt;
  std::memcpy(address.sun_path, parsed.address.c_str(), parsed.address.size() + 1);
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return std::nullopt;
  ucred credentials{};
  socklen_t size = sizeof credentials;
  const bool known = connect(s, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
                     getsockopt(s, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 &&
                     credentials.pid > 0;
  close(s);
  if (!known) return std::nullopt;
  ServerProcess server;
  server.pid = static_cast<std::uint32_t>(credentials.pid);
  std::ifstream comm("/proc/" + std::to_string(credentials.pid) + "/comm");
  std::getline(comm, server.program);
  if (server.program.empty()) server.program = "(a process that has ended)";
  return server;
}

}  // namespace dxshim::doctor
