// Which endpoint is which: two spellings of one socket or pipe, and the process that serves one
// (so that doctor can tell dxshim from an impostor, or from containerd itself, on an endpoint).
// The server is read from the system, not from what answers on the endpoint:
// endpoint_identity_posix.cpp asks the unix socket's peer credentials (SO_PEERCRED) and /proc;
// endpoint_identity_windows.cpp asks the named pipe's server process (GetNamedPipeServerProcessId).
#pragma once

#include <cstdint>
#include <string>

namespace dxshim::doctor {

// Whether two CRI endpoints name the same socket or pipe: unix:///x, unix:x and /x are one; a
// named pipe in any of its spellings (npipe://./pipe/x, npipe:////./pipe/x, \\.\pipe\x, any case).
bool SameEndpoint(const std::string& a, const std::string& b);

struct ServerProcess {
  std::uint32_t pid = 0;
  std::string program;  // "dxshim", "containerd" (Linux: its comm); "dxshim.exe" (Windows)
};

// Who serves an endpoint, as far as the system says.
struct EndpointServing {
  enum class State {
    kNobody,   // nothing listens there (no such socket or pipe, or a socket left by a dead one)
    kUnknown,  // something may: a TCP endpoint, access denied, every pipe instance busy, ...
    kProcess,  // `process` does
  };
  State state = State::kUnknown;
  ServerProcess process;
};

// Who serves `endpoint` (a unix socket, or a named pipe on Windows). Never waits: a socket whose
// queue is full, or a pipe whose instances are all busy, is kUnknown.
EndpointServing EndpointServer(const std::string& endpoint);

// "dxshim (pid 812)".
std::string Describe(const ServerProcess& server);

// Whether `program` is dxshim ("dxshim", "dxshim.exe", any case).
bool IsDxshim(const std::string& program);

}  // namespace dxshim::doctor
