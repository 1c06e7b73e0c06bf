#include "shim/windows/pipe_transport.h"

#include "shim/windows/loopback.h"

namespace dxshim::windows {

PipeTransport::PipeTransport(Endpoint& listen, Endpoint& runtime, std::string sddl, Log info,
                             Log warn)
    : info_(std::move(info)), warn_(std::move(warn)) {
  if (runtime.kind == Endpoint::Kind::kPipe) {
    forwarder_ =
        std::make_unique<PipeForwarder>(runtime.address, ForwarderPeers::kThisProcess, warn_);
    const int port = forwarder_->Start();
    info_("runtime " + runtime.ToString() + " reached through 127.0.0.1:" + std::to_string(port));
    runtime = Endpoint{Endpoint::Kind::kTcp, "127.0.0.1:" + std::to_string(port)};
  }
  if (listen.kind == Endpoint::Kind::kPipe) {
    pipe_ = listen;
    acceptor_ = std::make_unique<PipeAcceptor>(
        pipe_.address, std::move(sddl), [this](std::string& served_as) { return Dial(served_as); });
    admit_ =
        socket_bridge::AdmitOnlyThrough(acceptor_->backend_connections(), pipe_.ToString(), warn_,
                                        [this](const socket_bridge::BridgeClient& client) {
                                          if (callers_)
                                            callers_->Called({client.pid, client.program});
                                        });
  }
}

PipeTransport::~PipeTransport() { Stop(); }

bool PipeTransport::Admits(std::string_view grpc_peer) { return admit_ && admit_(grpc_peer); }

void PipeTransport::WaitForPipe(std::chrono::milliseconds wait) {
  if (!acceptor_) return;
  acceptor_->set_wait_for_pipe(wait, [this, wait] {
    info_("waiting up to " + std::to_string(wait.count() / 1000) + " s for " + pipe_.ToString() +
          ": another process serves it");
  });
}

void PipeTransport::Listen(socket_bridge::HandToServer hand) {
  if (!acceptor_) return;
  hand_ = std::move(hand);
  acceptor_->Start();
  info_("listening on " + pipe_.ToString() +
        " for kubelet (each connection handed to the CRI server, which listens on no port)");
}

SOCKET PipeTransport::Dial(std::string& served_as) {
  std::string error;
  auto pair = socket_bridge::MakeSocketPair(error, warn_);
  if (pair) served_as = hand_(std::move(pair->server_end), error);
  if (!pair || served_as.empty()) {
    warn_("a client of " + pipe_.ToString() + " is disconnected: " + error);
    return INVALID_SOCKET;
  }
  return pair->bridge_end.release();
}

void PipeTransport::Stop() {
  if (acceptor_) acceptor_->Stop();
  if (forwarder_) forwarder_->Stop();
}

}  // namespace dxshim::windows
