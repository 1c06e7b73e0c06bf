// ParseLocalEndpoint on Windows: named pipes (npipe://./pipe/<name>); unix sockets are refused.
#include "shim/proxy/endpoint_platform.h"
#include "shim/proxy/pipe_name.h"

namespace dxshim {

Endpoint ParseLocalEndpoint(std::string_view text) {
  if (text.starts_with(kPipeScheme)) {
    return Endpoint{Endpoint::Kind::kPipe, PipePathFromEndpoint(text)};
  }
  if (text.starts_with(kUnixScheme) || text.front() == '/') {
    RejectEndpoint(text,
                   "the Windows build of dxshim serves npipe:// and tcp:// endpoints, not unix "
                   "sockets");
  }
  RejectEndpoint(text, "expected npipe://./pipe/<name> or tcp://host:port");
}

}  // namespace dxshim
