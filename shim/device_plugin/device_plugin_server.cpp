#include "shim/device_plugin/device_plugin_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "shim/device_plugin/device_plugin_service.h"

namespace dxshim::device_plugin {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace

struct DevicePluginServer::Serving {
  std::unique_ptr<DevicePluginService> service;
  std::unique_ptr<grpc::Server> server;
};

DevicePluginServer::DevicePluginServer(DevicePluginOptions options,
                                       const devices::DeviceSnapshot& snapshot)
    : options_(std::move(options)),
      snapshot_(snapshot),
      slots_(options_.slots_per_gpu),
      socket_path_(Join(options_.dir, options_.endpoint)),
      kubelet_socket_(Join(options_.dir, "kubelet.sock")) {}

DevicePluginServer::~DevicePluginServer() { Stop(); }

DevicePluginServer::FileId DevicePluginServer::Identify(const std::string& path) {
  FileId id;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return id;
  id.exists = true;
  id.device = static_cast<unsigned long long>(st.st_dev);
  id.inode = static_cast<unsigned long long>(st.st_ino);
  return id;
}

void DevicePluginServer::Start() {
  if (thread_.joinable()) return;
#ifdef _WIN32
  // Kubelet's device-plugin sockets are AF_UNIX on Windows too, and gRPC 1.51 (the version this
  // build links) has no AF_UNIX transport on Windows: see README, "Windows nodes".
  spdlog::error("device plugin: not available in the Windows build (gRPC 1.51 has no AF_UNIX)");
  return;
#else
  spdlog::info("device plugin: {} ({} slot(s) per GPU), registering with {} once it exists",
               options_.resource_name, options_.slots_per_gpu, kubelet_socket_);
  thread_ = std::thread([this] { Watch(); });
#endif
}

void DevicePluginServer::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  StopServing();
}

void DevicePluginServer::Watch() {
  bool waiting_logged = false;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const auto kubelet = Identify(kubelet_socket_);
    if (!kubelet.exists) {
      if (registered_ || !waiting_logged) {
        spdlog::info("device plugin: waiting for kubelet ({} does not exist)", kubelet_socket_);
      }
      waiting_logged = true;
      registered_ = false;
    } else {
      waiting_logged = false;
      // Kubelet removed our socket (it does when it starts) or never had it: serve again, and
      // a kubelet that restarted (a new kubelet.sock) needs a new registration.
      if (!serving_ || Identify(socket_path_) != served_) {
        if (serving_) {
          spdlog::info(
              "device plugin: {} was removed (kubelet restarted); serving and "
              "registering again",
              socket_path_);
        }
        registered_ = false;
        EnsureServing();
      }
      if (registered_ && kubelet != registered_with_) {
        spdlog::info("device plugin: kubelet restarted ({} is new); registering again",
                     kubelet_socket_);
        registered_ = false;
      }
      if (serving_ && !registered_) {
        std::string error;
        if (Register(error)) {
          registered_ = true;
          registered_with_ = kubelet;
          last_error_.clear();
          spdlog::info("device plugin: registered {} with kubelet (endpoint {})",
                       options_.resource_name, options_.endpoint);
        } else if (error != last_error_) {
          spdlog::warn("device plugin: registration failed, retrying: {}", error);
          last_error_ = error;
        }
      }
    }
    lock.lock();
    cv_.wait_for(lock, options_.watch_interval, [this] { return stopping_; });
  }
}

void DevicePluginServer::SetRecord(devices::RuntimeRecord record) {
  std::lock_guard lock(serving_mutex_);
  record_ = record;
  if (serving_) serving_->service->SetRecord(std::move(record));
}

bool DevicePluginServer::EnsureServing() {
  StopServing();
  std::error_code ec;
  std::filesystem::remove(socket_path_, ec);  // a stale socket of an earlier run
  auto serving = std::make_unique<Serving>();
  {
    std::lock_guard lock(serving_mutex_);
    serving->service = std::make_unique<DevicePluginService>(snapshot_, slots_, record_);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(serving->service.get());
  serving->server = builder.BuildAndStart();
  if (!serving->server) {
    // Retried every watch interval: said once until it works again.
    if (!serve_failed_) spdlog::error("device plugin: cannot serve on {}; retrying", socket_path_);
    serve_failed_ = true;
    return false;
  }
  serve_failed_ = false;
  served_ = Identify(socket_path_);
  std::lock_guard lock(serving_mutex_);
  serving_ = std::move(serving);
  return true;
}

void DevicePluginServer::StopServing() {
  std::unique_ptr<Serving> serving;
  {
    std::lock_guard lock(serving_mutex_);
    serving = std::move(serving_);
  }
  if (!serving) return;
  serving->service->Stop();
  serving->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  serving->server->Wait();
  // Only our own socket: kubelet may already have replaced the directory's contents.
  if (Identify(socket_path_) == served_) {
    std::error_code ec;
    std::filesystem::remove(socket_path_, ec);
  }
}

bool DevicePluginServer::Register(std::string& error) const {
  auto channel =
      grpc::CreateChannel("unix://" + kubelet_socket_, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint(options_.endpoint);
  request.set_resource_name(options_.resource_name);
  request.mutable_options()->set_pre_start_required(false);
  request.mutable_options()->set_get_preferred_allocation_available(false);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  context.set_wait_for_ready(true);
  v1beta1::Empty response;
  const auto status = stub->Register(&context, request, &response);
  if (!status.ok()) {
    error = "kubelet at " + kubelet_socket_ + ": " + status.error_message() + " (code " +
            std::to_string(static_cast<int>(status.error_code())) + ")";
  }
  return status.ok();
}

}  // namespace dxshim::device_plugin
