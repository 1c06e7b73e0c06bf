#include "shim/device_plugin/device_plugin_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <filesystem>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "shim/device_plugin/device_plugin_service.h"
#include "shim/proxy/status_code_name.h"
#include "shim/socket_bridge/grpc_handoff.h"
#include "shim/socket_bridge/own_connections.h"
#include "shim/socket_bridge/socket_forwarder.h"
#include "shim/socket_bridge/socket_pair.h"

namespace dxshim::device_plugin {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

void Warn(const std::string& line) { spdlog::warn("device plugin: {}", line); }

}  // namespace

struct DevicePluginServer::Serving {
  // The bridged modes: kubelet's connections to the socket file, each handed to `server` through
  // a connection the bridge makes to itself (`handed_to`: set once the server is up, cleared
  // before it stops). Before the service: it asks the bridge whose calls it may take.
  std::unique_ptr<socket_bridge::SocketForwarder> bridge;
  std::shared_ptr<socket_bridge::HandoffDoor> handed_to;
  std::unique_ptr<DevicePluginService> service;
  std::unique_ptr<grpc::Server> server;
};

DevicePluginServer::DevicePluginServer(DevicePluginOptions options,
                                       const devices::DeviceSnapshot& snapshot,
                                       std::unique_ptr<PluginResource> resource)
    : options_(std::move(options)),
      snapshot_(snapshot),
      resource_(std::move(resource)),
      endpoint_(options_.endpoint),
      socket_path_(Join(options_.dir, endpoint_)),
      kubelet_socket_(Join(options_.dir, "kubelet.sock")) {}

DevicePluginServer::~DevicePluginServer() { Stop(); }

void DevicePluginServer::Start() {
  if (thread_.joinable()) return;
  spdlog::info("device plugin: {} ({}), sockets {}, registering with {} once it exists",
               options_.resource_name, resource_->Describe(), ToString(options_.sockets),
               kubelet_socket_);
  if (options_.sockets == PluginSockets::kBridgedTcpStandIn) {
    spdlog::warn(
        "device plugin: its sockets are loopback-TCP stand-ins for AF_UNIX ({}=tcp-stand-in, for "
        "tests under wine): no kubelet can use them",
        kPluginSocketsVariable);
  }
  if (bridged()) RemoveStaleSockets();
  thread_ = std::thread([this] { Watch(); });
}

void DevicePluginServer::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  StopServing();
  if (registration_) registration_->Stop();
}

void DevicePluginServer::RemoveStaleSockets() const {
  // The fresh names of earlier runs that ended without removing theirs (a crash, a kill).
  std::error_code ec;
  for (std::filesystem::directory_iterator it(options_.dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!IsFreshSocketName(name, options_.endpoint)) continue;
    std::error_code removed;
    std::filesystem::remove(it->path(), removed);
    if (!removed) spdlog::info("device plugin: removed {} (left by an earlier run)", name);
  }
}

void DevicePluginServer::Watch() {
  bool waiting_logged = false;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const bool stream_ended = watch_ended_max_ > watch_mark_;
    watch_ended_seen_ = watch_ended_max_;
    lock.unlock();
    const auto kubelet = socket_bridge::IdentifyFile(kubelet_socket_);
    if (!kubelet.exists) {
      if (registered_ || !waiting_logged) {
        spdlog::info("device plugin: {}: waiting for kubelet ({} does not exist)",
                     options_.resource_name, kubelet_socket_);
      }
      waiting_logged = true;
      registered_ = false;
    } else {
      waiting_logged = false;
      KeepServing();
      if (registered_ && (stream_ended || kubelet != registered_with_)) {
        spdlog::info("device plugin: {}: kubelet restarted ({}); registering again",
                     options_.resource_name,
                     stream_ended ? "the ListAndWatch stream of its registration ended"
                                  : kubelet_socket_ + " is a new file");
        registered_ = false;
      }
      if (serving_ && !registered_) RegisterOnce(kubelet);
    }
    lock.lock();
    cv_.wait_for(lock, options_.watch_interval,
                 [this] { return stopping_ || watch_ended_max_ > watch_ended_seen_; });
  }
}

void DevicePluginServer::KeepServing() {
  // Kubelet removed our socket (it does when it starts) or never had it: serve again.
  if (serving_ && socket_bridge::IdentifyFile(socket_path_) == served_) return;
  if (serving_) {
    spdlog::info("device plugin: {} was removed (kubelet restarted); serving and registering again",
                 socket_path_);
  }
  registered_ = false;
  EnsureServing();
}

void DevicePluginServer::RegisterOnce(const FileId& kubelet) {
  // Read before the call: a stream kubelet opens for this registration is numbered after it.
  const auto mark = WatchesOpened();
  std::string error;
  if (!Register(error)) {
    if (error != last_error_)
      spdlog::warn("device plugin: registering {} failed, retrying: {}", options_.resource_name,
                   error);
    last_error_ = error;
    return;
  }
  {
    std::lock_guard lock(mutex_);
    watch_mark_ = mark;
  }
  registered_ = true;
  // The file as it was before the call, not after: a kubelet that restarted meanwhile (the one
  // that took the registration, or the next) shows as a new file at the next look. At worst
  // that registers once more; a file read after the call could be the next kubelet's, which
  // would then never be registered with.
  registered_with_ = kubelet;
  last_error_.clear();
  spdlog::info("device plugin: registered {} with kubelet (endpoint {})", options_.resource_name,
               endpoint_);
}

void DevicePluginServer::OnWatchEnded(std::uint64_t number) {
  {
    std::lock_guard lock(mutex_);
    watch_ended_max_ = std::max(watch_ended_max_, number);
  }
  cv_.notify_all();
}

std::uint64_t DevicePluginServer::WatchesOpened() {
  std::lock_guard lock(serving_mutex_);
  return serving_ ? serving_->service->watches_opened() : 0;
}

void DevicePluginServer::SetRecord(RuntimeRecord record) {
  std::lock_guard lock(serving_mutex_);
  record_ = record;
  if (serving_) serving_->service->SetRecord(std::move(record));
}

WatchEnded DevicePluginServer::WatchEndedHook() {
  // A new service numbers its streams from 1 again.
  {
    std::lock_guard lock(mutex_);
    watch_mark_ = watch_ended_max_ = watch_ended_seen_ = 0;
  }
  return [this](std::uint64_t number) { OnWatchEnded(number); };
}

bool DevicePluginServer::EnsureServing() {
  StopServing();
  if (bridged()) {
    endpoint_ = FreshSocketName(options_.endpoint);
    socket_path_ = Join(options_.dir, endpoint_);
  }
  auto serving = std::make_unique<Serving>();
  std::string error;
  bool served = false;
  if (bridged()) {
    served = ServeBridged(*serving, error);
  } else {
    std::error_code ec;
    std::filesystem::remove(socket_path_, ec);  // a stale socket of an earlier run
    {
      std::lock_guard lock(serving_mutex_);
      serving->service = std::make_unique<DevicePluginService>(snapshot_, *resource_, record_,
                                                               PeerAdmission(), WatchEndedHook());
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket_path_, grpc::InsecureServerCredentials());
    builder.RegisterService(serving->service.get());
    serving->server = builder.BuildAndStart();
    served = serving->server != nullptr;
  }
  if (!served) {
    // Retried every watch interval: said once until it works again.
    if (!serve_failed_) {
      spdlog::error("device plugin: cannot serve on {}{}{}; retrying", socket_path_,
                    error.empty() ? "" : ": ", error);
    }
    serve_failed_ = true;
    if (serving->bridge) {
      serving->bridge->Stop();
      std::error_code ec;
      std::filesystem::remove(socket_path_, ec);  // listened on, never served
    }
    return false;
  }
  serve_failed_ = false;
  served_ = socket_bridge::IdentifyFile(socket_path_);
  std::lock_guard lock(serving_mutex_);
  serving_ = std::move(serving);
  return true;
}

bool DevicePluginServer::ServeBridged(Serving& serving, std::string& error) {
  auto listener =
      socket_bridge::ListenOnSocketFile(socket_path_, FamilyOf(options_.sockets), error);
  if (!listener.valid()) return false;
  // The server listens on no port: each of kubelet's connections to the socket file becomes a
  // connection the bridge makes to itself, whose other end is handed to the server
  // (socket_pair.h, grpc_handoff.h). Connections before the server is up, or once it is
  // stopping, are closed (kubelet dials only once registered, after this).
  serving.handed_to = std::make_shared<socket_bridge::HandoffDoor>();
  serving.bridge = std::make_unique<socket_bridge::SocketForwarder>(
      std::move(listener), "device plugin socket " + socket_path_,
      [door = serving.handed_to](std::string& dial_error, std::string& served_as) {
        auto pair = socket_bridge::MakeSocketPair(dial_error, Warn);
        if (!pair) return socket_bridge::Socket();
        served_as = door->Hand(std::move(pair->server_end), dial_error);
        if (served_as.empty()) return socket_bridge::Socket();
        return std::move(pair->bridge_end);
      },
      socket_bridge::Admission(), Warn);
  // Every call comes over a handed connection; each is still checked against the bridge's list
  // (own_connections.h).
  auto admit = socket_bridge::AdmitOnlyThrough(
      serving.bridge->backend_connections(), socket_path_,
      [](const std::string& line) { spdlog::warn("device plugin: {}", line); });
  {
    std::lock_guard lock(serving_mutex_);
    serving.service = std::make_unique<DevicePluginService>(snapshot_, *resource_, record_,
                                                            std::move(admit), WatchEndedHook());
  }
  grpc::ServerBuilder builder;
  builder.RegisterService(serving.service.get());
  serving.server = builder.BuildAndStart();
  if (!serving.server) {
    error = "the plugin's gRPC server cannot start";
    return false;
  }
  serving.handed_to->Open(*serving.server);
  spdlog::info("device plugin: serving {} ({}), each connection handed to its gRPC server",
               socket_path_, socket_bridge::ToString(FamilyOf(options_.sockets)));
  return true;
}

void DevicePluginServer::StopServing() {
  std::unique_ptr<Serving> serving;
  {
    std::lock_guard lock(serving_mutex_);
    serving = std::move(serving_);
  }
  if (!serving) return;
  if (serving->handed_to) serving->handed_to->Close();  // no new connection goes to it
  serving->service->Stop();
  serving->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  serving->server->Wait();
  if (serving->bridge) serving->bridge->Stop();  // after the server: its goodbyes go through
  // Only our own socket: kubelet may already have replaced the directory's contents.
  if (socket_bridge::IdentifyFile(socket_path_) == served_) {
    std::error_code ec;
    std::filesystem::remove(socket_path_, ec);
  }
}

std::string DevicePluginServer::RegistrationTarget(std::string& error) {
  if (!registration_) {
    registration_ =
        std::make_unique<SocketFileChannel>(kubelet_socket_, options_.sockets, "registration");
  }
  return registration_->Target(error);
}

bool DevicePluginServer::Register(std::string& error) {
  const auto target = RegistrationTarget(error);
  if (target.empty()) {
    error = "kubelet at " + kubelet_socket_ + ": " + error;
    return false;
  }
  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint(endpoint_);
  request.set_resource_name(options_.resource_name);
  request.mutable_options()->set_pre_start_required(false);
  request.mutable_options()->set_get_preferred_allocation_available(resource_->prefers());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  context.set_wait_for_ready(true);
  v1beta1::Empty response;
  const auto status = stub->Register(&context, request, &response);
  if (!status.ok()) {
    error = "kubelet at " + kubelet_socket_ + ": " + status.error_message() + " (code " +
            StatusCodeName(status.error_code()) + ")";
  }
  return status.ok();
}

}  // namespace dxshim::device_plugin
