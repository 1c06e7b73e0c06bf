// A local process that tries dxshim's loopback ports: which TCP ports dxshim's processes listen
// on (/proc), and a gRPC call's first bytes sent to one of them by `nobody`. dxshim's gRPC servers
// behind a bridge listen on no port (shim/socket_bridge/socket_pair.h): whatever does listen must
// answer an unprivileged stranger with no HTTP/2 at all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dxshim::test {

// `pid` and every process whose chain of parents reaches it (/proc/*/stat).
std::vector<int> ProcessTree(int pid);
// The processes whose environment holds `entry` ("WINEPREFIX=/tmp/x/prefix"): a wine prefix's
// programs and its wineserver, which holds the sockets of them all (wine 8's sockets live in the
// server).
std::vector<int> ProcessesWithEnvironment(const std::string& entry);
// The TCP ports that the processes `pids` listen on (/proc/net/tcp and tcp6, rows in LISTEN
// state, matched to the processes' socket descriptors), sorted; wine's processes included (their
// sockets are Linux sockets). Needs root to read other users' descriptors.
std::vector<std::uint16_t> ListeningTcpPorts(const std::vector<int>& pids);

// tests/support/http2_impostor.py run as `nobody` against 127.0.0.1:`port`: a gRPC call's first
// bytes (client preface, SETTINGS, HEADERS for `method`) from an unprivileged local process.
struct Http2Impostor {
  std::size_t received = 0;     // bytes that came back before the connection ended
  std::string ended;            // "eof", "reset" or "timeout" (5 s)
  bool http2_settings = false;  // the answer began with a SETTINGS frame: gRPC's parser took it
  std::string output;           // the script's own line (or its error)
};
Http2Impostor SendHttp2AsNobody(std::uint16_t port, const std::string& work_dir,
                                const std::string& method = "/runtime.v1.RuntimeService/Version");

}  // namespace dxshim::test
