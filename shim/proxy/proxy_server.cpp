#include "shim/proxy/proxy_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "shim/base/host_port.h"
#include "shim/proxy/relay_choice.h"

namespace dxshim {

ProxyServer::ProxyServer(ProxyOptions options) : options_(std::move(options)) {}

ProxyServer::~ProxyServer() { Shutdown(); }

void ProxyServer::Start() {
  channel_ = DialRuntime(options_.runtime, options_.reconnect_backoff_max);
  stub_ = std::make_unique<grpc::GenericStub>(channel_);
  shared_.runtime = stub_.get();
  shared_.interceptor = options_.interceptor;
  shared_.service = &service_;
  shared_.admit_peer = options_.admit_peer;
  shared_.observer = options_.observer;
  shared_.local_methods = options_.local_methods.empty() ? nullptr : &options_.local_methods;
  shared_.relay_for = RelayFor;

  // Handed connections: `listen` is the bridge's front, not the server's to prepare or own.
  const bool unix_socket =
      options_.listen.kind == Endpoint::Kind::kUnix && !options_.handed_connections;
  if (!options_.handed_connections) PrepareListen();

  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  builder.RegisterAsyncGenericService(&service_);
  cq_ = builder.AddCompletionQueue();
  shared_.cq = cq_.get();
  if (!options_.handed_connections) {
    builder.AddListeningPort(options_.listen.GrpcTarget(), grpc::InsecureServerCredentials(),
                             unix_socket ? nullptr : &bound_port_);
  }
  server_ = BuildAndStart(builder);
  if (!server_) {
    cq_->Shutdown();  // a queue must be shut down and drained before it is destroyed
    void* tag = nullptr;
    bool ok = false;
    while (cq_->Next(&tag, &ok)) {
    }
    throw std::runtime_error("cannot listen on " + options_.listen.ToString());
  }
  if (options_.handed_connections) handoff_->Open(*server_);
  ProxiedCall::Accept(shared_);
  cq_thread_ = std::thread([cq = cq_.get()] {
    void* tag = nullptr;
    bool ok = false;
    while (cq->Next(&tag, &ok)) static_cast<CallTag*>(tag)->Complete(ok);
  });
  if (!options_.handed_connections) OwnSocketFile();
  connectivity_log_ = std::make_unique<ConnectivityLog>(channel_, options_.runtime.ToString(),
                                                        cq_.get(), options_.observer);
  if (options_.handed_connections) {
    spdlog::info(
        "serving the connections {} hands over (no listening port), relaying to runtime {}",
        options_.listen.ToString(), options_.runtime.ToString());
  } else if (unix_socket) {
    spdlog::info("listening on {} (mode {:o}), relaying to runtime {}", options_.listen.ToString(),
                 options_.socket_mode, options_.runtime.ToString());
  } else {
    spdlog::info("listening on tcp://{}:{}, relaying to runtime {}",
                 HostTextOf(options_.listen.address), bound_port_, options_.runtime.ToString());
  }
}

std::string ProxyServer::ServeConnection(socket_bridge::Socket connection, std::string& error) {
  return handoff_->Hand(std::move(connection), error);
}

socket_bridge::HandToServer ProxyServer::Handoff() const {
  return [door = handoff_](socket_bridge::Socket connection, std::string& error) {
    return door->Hand(std::move(connection), error);
  };
}

void ProxyServer::Shutdown() {
  if (stopped_ || !server_) return;
  stopped_ = true;
  handoff_->Close();  // no connection is handed to a server that shuts down
  const auto streams = shared_.registry.CancelAll();
  // live_calls counts the acceptor waiting for the next call too.
  spdlog::info("shutting down: cancelled {} stream(s), waiting up to {} ms for {} call(s)", streams,
               options_.shutdown_grace.count(), std::max(shared_.live_calls.load() - 1, 0));
  server_->Shutdown(std::chrono::system_clock::now() + options_.shutdown_grace);
  // Every call has been finished or cancelled; let their last completions drain before the queue
  // closes (no operation may start on a closed queue).
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  if (connectivity_log_) connectivity_log_->Stop();
  while ((shared_.live_calls > 0 || (connectivity_log_ && !connectivity_log_->done())) &&
         std::chrono::steady_clock::now() < drain_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  cq_->Shutdown();
  cq_thread_.join();
  socket_file_.reset();
  spdlog::info("stopped");
}

}  // namespace dxshim
