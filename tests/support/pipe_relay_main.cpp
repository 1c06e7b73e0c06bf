// A named-pipe relay for the end-to-end test of the pipe transport with real gRPC: cross-compiled
// with mingw and run under wine, it puts dxshim's Windows pipe transport in the middle of a real
// CRI connection on Linux:
//   CRI client --TCP--> PipeForwarder --\\.\pipe\NAME--> PipeAcceptor --TCP--> dxshim (Linux)
// (wine's sockets are the host's). Prints "forwarder-port N", then relays until STOP_FILE exists.
// With BACKEND_PORT 0 it only forwards, to a pipe another process serves (the real dxshim.exe):
//   CRI client --TCP--> PipeForwarder --\\.\pipe\NAME--> dxshim.exe
//   pipe-relay.exe NAME BACKEND_PORT STOP_FILE
// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on

#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/serve_defaults.h"
#include "devices/windows/wide_text.h"
#include "shim/windows/loopback.h"
#include "shim/windows/pipe_acceptor.h"
#include "shim/windows/pipe_dialer.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: pipe-relay.exe NAME BACKEND_PORT STOP_FILE\n");
    return 2;
  }
  WSADATA wsa;
  WSAStartup(MAKEWORD(2, 2), &wsa);
  const std::string pipe = std::string("\\\\.\\pipe\\") + argv[1];
  const int backend = std::atoi(argv[2]);
  // The host's path as wine sees it (its Z: drive is the host's root).
  std::string stop_file = std::string("Z:") + argv[3];
  for (auto& c : stop_file) c = c == '/' ? '\\' : c;
  const auto stop_path = dxshim::devices::windows::Widen(stop_file);

  // The backend is a Linux dxshim on TCP (pipe_transport_e2e_test), not a server in this
  // process: nothing is handed, nothing listed.
  dxshim::windows::PipeAcceptor acceptor(
      pipe, dxshim::config::kDefaultPipeSddl,
      [backend](std::string& /*served_as*/) { return dxshim::windows::ConnectLoopback(backend); });
  if (backend != 0) acceptor.Start();
  // Any local process: the CRI client is a Linux process that wine's TCP table cannot name.
  dxshim::windows::PipeForwarder forwarder(pipe);
  std::printf("forwarder-port %d\n", forwarder.Start());
  std::fflush(stdout);
  while (GetFileAttributesW(stop_path.c_str()) == INVALID_FILE_ATTRIBUTES) Sleep(100);
  forwarder.Stop();
  acceptor.Stop();
  std::printf("relay stopped\n");
  WSACleanup();
  return 0;
}
