// Who may use what only dxshim's own bridges should reach:
// - a gRPC server that a bridge fronts (the CRI server behind kubelet's named pipe, the device
//   plugin's behind its AF_UNIX socket) listens on no port: the bridge makes a connection to
//   itself for each client (socket_pair.h) and hands its server end to gRPC (grpc_handoff.h), so
//   gRPC reads no byte that did not come through the front. Each call is still checked: its peer
//   must be the name gRPC gave one of the bridge's handed connections while that one lasts
//   (OwnConnections), which also says which client the call came from;
// - a loopback port that is this process's way out (the device plugin's registration with
//   kubelet.sock, the runtime forwarder to containerd's pipe) takes a connection only when the
//   system's table of TCP connections names this process as its other end (PeerIsThisProcess),
//   before a byte of it goes on. Any local process can connect to 127.0.0.1.
//
// Wine 8.0 cannot name the owner of a socket listed among the IPv6 connections (gRPC's own
// sockets on Windows are dual-stack ones): only under wine (RunningUnderWine, which a Windows node
// never is) is that blind spot not held against a connection (OwnedByThisProcess says how). A
// real node always runs the whole check.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "shim/socket_bridge/socket_api.h"
#include "shim/socket_bridge/tcp_endpoint.h"

namespace dxshim::socket_bridge {

// Whether `c`, seen from its owner's end, belongs to this process by the system's TCP table;
// `refusal` says why not ("it comes from process 4242", "it is not in the TCP table").
bool OwnedByThisProcess(const TcpConnection& c, std::string& refusal);
// Whether the other end of `accepted`, a connection accepted on a loopback listener, is a socket
// of this process; `refusal` says why not.
bool PeerIsThisProcess(NativeSocket accepted, std::string& refusal);

// Who is at the far end of a bridged connection (a named pipe's client), when the bridge knows.
struct BridgeClient {
  std::uint32_t pid = 0;
  std::string program;  // its executable's file name, lower case
};

class OwnConnections {
 public:
  OwnConnections() = default;
  OwnConnections(const OwnConnections&) = delete;
  OwnConnections& operator=(const OwnConnections&) = delete;

  // Keeps a connection listed; unlists it when reset or destroyed, which its holder does when
  // its bridge ends. Must not outlive the OwnConnections.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration() { reset(); }
    void reset();
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    friend class OwnConnections;
    Registration(OwnConnections* owner, std::uint64_t id) : owner_(owner), id_(id) {}
    OwnConnections* owner_ = nullptr;
    std::uint64_t id_ = 0;
  };

  // Lists a connection handed to the server as `grpc_peer` (HandToGrpcServer's answer), with
  // the client the bridge carries it for. An empty name lists nothing (calls are refused).
  [[nodiscard]] Registration Add(std::string grpc_peer, BridgeClient client = {});
  // Whether a call whose gRPC peer is `grpc_peer` came over a listed connection; `refusal` says
  // why not; `client`, when given, gets the connection's client. A name listed twice (POSIX's
  // "fd:N" again once gRPC closed the first) means the newer connection.
  bool Admits(std::string_view grpc_peer, std::string& refusal, BridgeClient* client = nullptr);
  std::size_t size();

 private:
  struct Entry {
    std::string grpc_peer;
    BridgeClient client;
  };
  void Remove(std::uint64_t id);

  std::mutex mutex_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_id_ = 1;
};

// The admission hook of a gRPC server behind a bridge (the CRI server behind kubelet's pipe, the
// device plugin's behind its socket): admits a call over one of `connections`; tells `warn`
// "refused a call from PEER: it did not come through FRONT (why)" otherwise.
using PeerAdmission = std::function<bool(std::string_view grpc_peer)>;
// `admitted`, when set, is told the client of each connection a call is admitted over.
PeerAdmission AdmitOnlyThrough(OwnConnections& connections, std::string front,
                               std::function<void(const std::string&)> warn,
                               std::function<void(const BridgeClient&)> admitted = {});

}  // namespace dxshim::socket_bridge
