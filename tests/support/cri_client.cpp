#include "tests/support/cri_client.h"

#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/support/channel_arguments.h>

#include <condition_variable>
#include <mutex>

#include "shim/proxy/byte_buffer.h"

namespace dxshim::test {

namespace {
// gRPC shuts its library down when the last gRPC object of the process goes, joining its executor
// threads; in gRPC 1.51 that join can take ~10 s when it follows a heavy stream. Tests create and
// destroy servers and channels all the time: keep the library up for the whole test process.
const bool kGrpcKeptInitialized = [] {
  grpc_init();
  return true;
}();
}  // namespace

std::shared_ptr<grpc::Channel> DialUnix(const std::string& socket_path) {
  return DialTarget("unix:" + socket_path);
}

std::shared_ptr<grpc::Channel> DialTarget(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // Each client gets its own connection, as separate processes would.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  // Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: it bounds how long a connection attempt may take
  // (gRPC's default, 20 s, is kept), not how soon the next one starts.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

CriClient::CriClient(const std::string& socket_path) : CriClient(DialUnix(socket_path)) {}

CriClient::CriClient(std::shared_ptr<grpc::Channel> over)
    : channel(std::move(over)),
      runtime(runtime::v1::RuntimeService::NewStub(channel)),
      images(runtime::v1::ImageService::NewStub(channel)),
      generic(std::make_unique<grpc::GenericStub>(channel)) {}

grpc::Status CriClient::Version(runtime::v1::VersionResponse* response,
                                std::chrono::milliseconds timeout) {
  auto ctx = Deadline(timeout);
  runtime::v1::VersionRequest request;
  request.set_version("v1");
  return runtime->Version(ctx.get(), request, response);
}

void CriClient::RemovePod(const std::string& pod_id) {
  runtime::v1::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(pod_id);
  runtime::v1::StopPodSandboxResponse stopped;
  runtime->StopPodSandbox(Deadline(std::chrono::seconds(30)).get(), stop, &stopped);
  runtime::v1::RemovePodSandboxRequest remove;
  remove.set_pod_sandbox_id(pod_id);
  runtime::v1::RemovePodSandboxResponse removed;
  runtime->RemovePodSandbox(Deadline(std::chrono::seconds(30)).get(), remove, &removed);
}

grpc::Status CriClient::CreateAndStart(const std::string& pod,
                                       const runtime::v1::PodSandboxConfig& sandbox,
                                       const runtime::v1::ContainerConfig& config,
                                       std::string* id) {
  runtime::v1::CreateContainerRequest create;
  create.set_pod_sandbox_id(pod);
  *create.mutable_config() = config;
  *create.mutable_sandbox_config() = sandbox;
  runtime::v1::CreateContainerResponse created;
  auto s = runtime->CreateContainer(Deadline(std::chrono::seconds(60)).get(), create, &created);
  if (!s.ok()) return s;
  *id = created.container_id();
  runtime::v1::StartContainerRequest start;
  start.set_container_id(*id);
  runtime::v1::StartContainerResponse started;
  return runtime->StartContainer(Deadline(std::chrono::seconds(60)).get(), start, &started);
}

grpc::Status CriClient::Exec(const std::string& id, const std::string& script,
                             runtime::v1::ExecSyncResponse* out) {
  runtime::v1::ExecSyncRequest exec;
  exec.set_container_id(id);
  for (const char* arg : {"sh", "-c"}) exec.add_cmd(arg);
  exec.add_cmd(script);
  exec.set_timeout(30);
  return runtime->ExecSync(Deadline(std::chrono::seconds(60)).get(), exec, out);
}

grpc::Status CriClient::Raw(const std::string& method, const std::string& request,
                            std::string* response, std::chrono::milliseconds timeout) {
  auto ctx = Deadline(timeout);
  const grpc::ByteBuffer req = FromBytes(request);
  grpc::ByteBuffer resp;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status result;
  generic->UnaryCall(ctx.get(), method, grpc::StubOptions(), &req, &resp, [&](grpc::Status s) {
    std::lock_guard lock(mu);
    result = std::move(s);
    done = true;
    cv.notify_one();
  });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return done; });
  if (result.ok() && response != nullptr) *response = ToBytes(resp);
  return result;
}

runtime::v1::PodSandboxConfig HostNetworkPod(const std::string& name, const std::string& uid,
                                             const std::string& log_dir) {
  runtime::v1::PodSandboxConfig pod;
  pod.mutable_metadata()->set_name(name);
  pod.mutable_metadata()->set_uid(uid);
  pod.mutable_metadata()->set_namespace_("default");
  pod.set_log_directory(log_dir);
  (*pod.mutable_labels())["app"] = name;
  (*pod.mutable_annotations())["example.com/note"] = "dxshim test";
  pod.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
      runtime::v1::NODE);
  return pod;
}

runtime::v1::ContainerConfig SleepingBusybox(const std::string& name) {
  runtime::v1::ContainerConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_image()->set_image("dxshim.test/busybox:1");
  c.add_command("/bin/sleep");
  c.add_args("3600");
  c.set_log_path(name + ".log");
  return c;
}

std::unique_ptr<grpc::ClientContext> Deadline(std::chrono::milliseconds timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

}  // namespace dxshim::test
