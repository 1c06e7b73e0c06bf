#include "shim/proxy_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <stdexcept>

namespace dxshim {

bool IsLongLivedStream(std::string_view method) {
  const auto slash = method.rfind('/');
  const auto name = slash == std::string_view::npos ? method : method.substr(slash + 1);
  return name == "GetContainerEvents" || name.starts_with("Stream");
}

ProxyServer::ProxyServer(ProxyOptions options) : options_(std::move(options)) {}

ProxyServer::~ProxyServer() { Shutdown(); }

void ProxyServer::Start() {
  channel_ = DialRuntime(options_.runtime, options_.reconnect_backoff_max);
  stub_ = std::make_unique<grpc::GenericStub>(channel_);
  shared_.runtime = stub_.get();
  shared_.interceptor = options_.interceptor;
  service_ = std::make_unique<ProxyService>(shared_);

  const bool unix_socket = options_.listen.kind == Endpoint::Kind::kUnix;
  if (unix_socket) PrepareUnixSocketPath(options_.listen.address);

  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  builder.RegisterCallbackGenericService(service_.get());
  builder.AddListeningPort(options_.listen.GrpcTarget(), grpc::InsecureServerCredentials(),
                           unix_socket ? nullptr : &bound_port_);
  // The socket must never be reachable with looser permissions than configured, not even between
  // bind() and chmod(): create it under a restrictive umask.
  const mode_t previous_umask = unix_socket ? ::umask(0177) : 0;
  server_ = builder.BuildAndStart();
  if (unix_socket) ::umask(previous_umask);
  if (!server_ || (!unix_socket && bound_port_ == 0)) {
    throw std::runtime_error("cannot listen on " + options_.listen.ToString());
  }
  if (unix_socket) {
    socket_file_ = std::make_unique<UnixSocketFile>(options_.listen.address, options_.socket_mode);
  }
  connectivity_log_ = std::make_unique<ConnectivityLog>(channel_, options_.runtime.ToString());
  if (unix_socket) {
    spdlog::info("listening on {} (mode {:o}), relaying to runtime {}", options_.listen.ToString(),
                 options_.socket_mode, options_.runtime.ToString());
  } else {
    const auto host = options_.listen.address.substr(0, options_.listen.address.rfind(':'));
    spdlog::info("listening on tcp://{}:{}, relaying to runtime {}", host, bound_port_,
                 options_.runtime.ToString());
  }
}

void ProxyServer::Shutdown() {
  if (stopped_ || !server_) return;
  stopped_ = true;
  const auto streams = shared_.registry.CancelIf(IsLongLivedStream);
  spdlog::info("shutting down: cancelled {} stream(s), waiting up to {} ms for {} call(s)", streams,
               options_.shutdown_grace.count(), shared_.registry.size());
  server_->Shutdown(std::chrono::system_clock::now() + options_.shutdown_grace);
  server_->Wait();
  socket_file_.reset();
  connectivity_log_.reset();
  spdlog::info("stopped");
}

}  // namespace dxshim
