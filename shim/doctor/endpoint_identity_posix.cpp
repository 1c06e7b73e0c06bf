// Linux: the credentials the listening process left on its unix socket (SO_PEERCRED of a
// connection to it: the process that called listen), and its name from /proc.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "shim/doctor/endpoint_identity.h"
#include "shim/proxy/endpoint.h"

namespace dxshim::doctor {

EndpointServing EndpointServer(const std::string& endpoint) {
  using State = EndpointServing::State;
  EndpointServing serving;
  Endpoint parsed;
  try {
    parsed = ParseEndpoint(endpoint);
  } catch (const std::exception&) {
    return serving;
  }
  if (parsed.kind != Endpoint::Kind::kUnix) return serving;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (parsed.address.size() >= sizeof address.sun_path) return serving;
  std::memcpy(address.sun_path, parsed.address.c_str(), parsed.address.size() + 1);
  // Non-blocking: a listener whose queue is full answers EAGAIN instead of holding doctor.
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return serving;
  ucred credentials{};
  socklen_t size = sizeof credentials;
  if (connect(s, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) serving.state = State::kNobody;
  } else if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 &&
             credentials.pid > 0) {  // 0: a server in another PID namespace
    serving.state = State::kProcess;
    serving.process.pid = static_cast<std::uint32_t>(credentials.pid);
    std::ifstream comm("/proc/" + std::to_string(credentials.pid) + "/comm");
    std::getline(comm, serving.process.program);
    if (serving.process.program.empty()) serving.process.program = "(a process that has ended)";
  }
  close(s);
  return serving;
}

}  // namespace dxshim::doctor
