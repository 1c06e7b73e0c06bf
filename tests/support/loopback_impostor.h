// A local process that pretends to be one of dxshim's loopback bridges. A bridge's connection to
// the gRPC server it fronts is in the kernel's TCP table for anybody to read (kubelet's
// ListAndWatch keeps one open for good); all of 127/8 is loopback, so another process can bind
// 127.0.0.2 (or any 127.x) with the same port number and dial the server from there. A server
// that checked only the port would take it for the bridge.
#pragma once

#include <grpcpp/channel.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dxshim::test {

// The local ports of the established connections from 127.0.0.1 to 127.0.0.1:`server_port`
// (/proc/net/tcp): the ends the bridges in front of that server hold.
std::vector<std::uint16_t> LoopbackClientPorts(std::uint16_t server_port);

// A TCP socket bound to `address`:`port` (with SO_REUSEADDR when `reuse_address`) and connected
// to 127.0.0.1:`server_port`; -1 with `error` naming the failed call otherwise.
int ConnectFrom(const std::string& address, std::uint16_t port, bool reuse_address,
                std::uint16_t server_port, std::string& error);

// A gRPC channel over the connected socket `fd` (gRPC takes it).
std::shared_ptr<grpc::Channel> ChannelOver(int fd);

// deploy/windows/CHECKLIST.md's impostor, spelled for Linux: curl calling gRPC `method` on
// 127.0.0.1:`server_port` over HTTP/2 from 127.0.0.2 (and `from_port`, when not 0). Without
// `message` the call has none (HEADERS with END_STREAM: an unread refusal cannot race the
// upload); with it, one empty message (what a callback service needs before its handler runs).
// Returns curl's verbose output (the answer's trailers among it); a test failure if curl fails.
std::string CurlGrpcImpostor(std::uint16_t from_port, std::uint16_t server_port,
                             const std::string& method, bool message, const std::string& work_dir);

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
