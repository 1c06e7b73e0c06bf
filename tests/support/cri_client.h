// The project's own CRI client for tests and benchmarks: typed stubs of the cri-api subset over
// a unix socket, plus builders for the pods and containers the tests run.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/generic/generic_stub.h>

#include <chrono>
#include <memory>
#include <string>

#include "runtime/v1/api.grpc.pb.h"

namespace dxshim::test {

// A channel with no message size limit (kubelet allows 16 MiB; the proxy must carry more).
std::shared_ptr<grpc::Channel> DialUnix(const std::string& socket_path);
// The same for any gRPC target ("127.0.0.1:5000", "unix:/path").
std::shared_ptr<grpc::Channel> DialTarget(const std::string& target);

class CriClient {
 public:
  explicit CriClient(const std::string& socket_path);
  explicit CriClient(std::shared_ptr<grpc::Channel> over);

  grpc::Status Version(runtime::v1::VersionResponse* response,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Stops and removes a pod (and with it its containers), ignoring "not found".
  void RemovePod(const std::string& pod_id);
  // CreateContainer in `pod` (with its sandbox config, as kubelet sends it) and, when that
  // worked, StartContainer; the first status that is not OK, else OK. Fills `id` once created.
  grpc::Status CreateAndStart(const std::string& pod, const runtime::v1::PodSandboxConfig& sandbox,
                              const runtime::v1::ContainerConfig& config, std::string* id);
  // ExecSync of `sh -c SCRIPT` in container `id`.
  grpc::Status Exec(const std::string& id, const std::string& script,
                    runtime::v1::ExecSyncResponse* out);
  // A raw call of any method, request and response as bytes.
  grpc::Status Raw(const std::string& method, const std::string& request, std::string* response,
                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime;
  std::unique_ptr<runtime::v1::ImageService::Stub> images;
  std::unique_ptr<grpc::GenericStub> generic;
};

// A pod on the host network (no CNI needed).
runtime::v1::PodSandboxConfig HostNetworkPod(const std::string& name, const std::string& uid,
                                             const std::string& log_dir);
// A busybox container running `sleep 3600`.
runtime::v1::ContainerConfig SleepingBusybox(const std::string& name);

// A context with a deadline `timeout` from now.
std::unique_ptr<grpc::ClientContext> Deadline(std::chrono::milliseconds timeout);

}  // namespace dxshim::test
