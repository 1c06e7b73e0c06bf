#include "shim/socket_bridge/own_connections.h"

#include <algorithm>

namespace dxshim::socket_bridge {

bool OwnedByThisProcess(const TcpConnection& c, std::string& refusal) {
  const auto owner = ConnectionOwner(c);
  if (owner && owner->process == ThisProcess()) return true;
  // Wine 8.0 reads /proc/net/tcp6 with the inode taken from the wrong column
  // (dlls/nsiproxy.sys/tcp.c: seven fields skipped where five precede it), so it names no owner
  // for a socket listed there (an IPv6 or dual-stack one, which gRPC makes on Windows), or drops
  // its row when that column does not parse. IPv4 rows it names right. Only that blind spot,
  // only under wine, is not held against a connection; Windows names every owner.
  if (RunningUnderWine() && (!owner || (owner->listed_as_ipv6 && owner->process == 0))) {
    return true;
  }
  if (!owner) {
    refusal = "its connection " + c.local.ToString() + " -> " + c.remote.ToString() +
              " is not in the TCP table";
  } else if (owner->process == 0) {
    refusal = "the TCP table names no process for its connection " + c.local.ToString() + " -> " +
              c.remote.ToString();
  } else {
    refusal = "it comes from process " + std::to_string(owner->process) + ", not this one";
  }
  return false;
}

bool PeerIsThisProcess(NativeSocket accepted, std::string& refusal) {
  const auto seen = ConnectionOf(accepted);
  if (!seen) {
    refusal = "its addresses cannot be read: " + LastSocketError();
    return false;
  }
  return OwnedByThisProcess(seen->Reversed(), refusal);
}

OwnConnections::Registration::Registration(Registration&& other) noexcept
    : owner_(other.owner_), id_(other.id_) {
  other.owner_ = nullptr;
}

OwnConnections::Registration& OwnConnections::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = other.owner_;
    id_ = other.id_;
    other.owner_ = nullptr;
  }
  return *this;
}

void OwnConnections::Registration::reset() {
  if (owner_ != nullptr) owner_->Remove(id_);
  owner_ = nullptr;
}

OwnConnections::Registration OwnConnections::Add(std::string grpc_peer, BridgeClient client) {
  if (grpc_peer.empty()) return {};
  std::lock_guard lock(mutex_);
  const auto id = next_id_++;
  entries_.emplace(id, Entry{std::move(grpc_peer), std::move(client)});
  return {this, id};
}

void OwnConnections::Remove(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  entries_.erase(id);
}

std::size_t OwnConnections::size() {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

bool OwnConnections::Admits(std::string_view grpc_peer, std::string& refusal,
                            BridgeClient* client) {
  std::lock_guard lock(mutex_);
  const auto newest = std::find_if(entries_.rbegin(), entries_.rend(),
                                   [&](const auto& e) { return e.second.grpc_peer == grpc_peer; });
  if (newest == entries_.rend()) {
    refusal = "no connection the bridge handed to the server has that name";
    return false;
  }
  if (client) *client = newest->second.client;
  return true;
}

PeerAdmission AdmitOnlyThrough(OwnConnections& connections, std::string front,
                               std::function<void(const std::string&)> warn,
                               std::function<void(const BridgeClient&)> admitted) {
  return [&connections, front = std::move(front), warn = std::move(warn),
          admitted = std::move(admitted)](std::string_view peer) {
    std::string refusal;
    BridgeClient client;
    if (connections.Admits(peer, refusal, &client)) {
      if (admitted) admitted(client);
      return true;
    }
    warn("refused a call from " + std::string(peer) + ": it did not come through " + front + " (" +
         refusal + ")");
    return false;
  };
}

}  // namespace dxshim::socket_bridge
