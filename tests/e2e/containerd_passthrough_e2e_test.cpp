// dxshim in front of a real containerd: every result through dxshim equals the same call made
// directly to containerd.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using google::protobuf::util::MessageDifferencer;

// One containerd and one dxshim for the whole binary: starting them is the slow part.
Containerd* g_containerd = nullptr;
DxshimProcess* g_dxshim = nullptr;
TempDir* g_dir = nullptr;

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_dir = new TempDir();
    g_containerd = new Containerd();
    g_dxshim =
        new DxshimProcess(*g_dir / "dxshim.sock", g_containerd->socket(), *g_dir / "dxshim.log");
  }
  void TearDown() override {
    const auto code = g_dxshim->Stop();
    EXPECT_EQ(code, 0) << g_dxshim->process().Log();
    delete g_dxshim;
    delete g_containerd;
    delete g_dir;
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new Environment);

class Passthrough : public ::testing::Test {
 protected:
  CriClient direct{g_containerd->socket()};
  CriClient proxied{g_dxshim->socket()};
};

// Calls `method` on both clients and expects the same status and an equal response.
template <typename Request, typename Response, typename Stub>
Response ExpectSame(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    Stub& direct, Stub& proxied, const Request& request) {
  Response via_direct, via_proxy;
  const auto s1 = (direct.*method)(Deadline(std::chrono::seconds(30)).get(), request, &via_direct);
  const auto s2 = (proxied.*method)(Deadline(std::chrono::seconds(30)).get(), request, &via_proxy);
  EXPECT_EQ(s1.error_code(), s2.error_code());
  EXPECT_EQ(s1.error_message(), s2.error_message());
  std::string diff;
  MessageDifferencer differ;
  // containerd builds lists from Go maps: two identical calls may list the same items in another
  // order, so lists compare as sets.
  differ.set_repeated_field_comparison(MessageDifferencer::AS_SET);
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(via_direct, via_proxy)) << diff;
  return via_proxy;
}

TEST_F(Passthrough, VersionStatusAndImagesEqualDirect) {
  v1::VersionRequest version;
  version.set_version("v1");
  const auto v =
      ExpectSame(&v1::RuntimeService::Stub::Version, *direct.runtime, *proxied.runtime, version);
  EXPECT_EQ(v.runtime_name(), "containerd");

  v1::StatusRequest status;
  status.set_verbose(true);
  const auto s =
      ExpectSame(&v1::RuntimeService::Stub::Status, *direct.runtime, *proxied.runtime, status);
  EXPECT_GE(s.status().conditions_size(), 2);

  const auto images = ExpectSame(&v1::ImageService::Stub::ListImages, *direct.images,
                                 *proxied.images, v1::ListImagesRequest());
  EXPECT_GE(images.images_size(), 2);

  v1::ImageStatusRequest image;
  image.mutable_image()->set_image(kBusyboxImage);
  const auto is =
      ExpectSame(&v1::ImageService::Stub::ImageStatus, *direct.images, *proxied.images, image);
  ASSERT_TRUE(is.has_image());
  EXPECT_EQ(is.image().repo_tags(0), kBusyboxImage);

  image.mutable_image()->set_image("dxshim.test/absent:1");
  const auto absent =
      ExpectSame(&v1::ImageService::Stub::ImageStatus, *direct.images, *proxied.images, image);
  EXPECT_FALSE(absent.has_image());
}

TEST_F(Passthrough, PodAndContainerLifecycle) {
  TempDir work;
  std::ofstream(work / "hello.txt") << "hello from the host\n";

  v1::RunPodSandboxRequest run;
  *run.mutable_config() = HostNetworkPod("lifecycle", "uid-lifecycle", work / "logs");
  v1::RunPodSandboxResponse pod;
  ASSERT_TRUE(
      proxied.runtime->RunPodSandbox(Deadline(std::chrono::seconds(60)).get(), run, &pod).ok());

  v1::PodSandboxStatusRequest pod_status;
  pod_status.set_pod_sandbox_id(pod.pod_sandbox_id());
  const auto ps = ExpectSame(&v1::RuntimeService::Stub::PodSandboxStatus, *direct.runtime,
                             *proxied.runtime, pod_status);
  EXPECT_EQ(ps.status().state(), v1::SANDBOX_READY);
  EXPECT_EQ(ps.status().annotations().at("example.com/note"), "dxshim test");

  v1::CreateContainerRequest create;
  create.set_pod_sandbox_id(pod.pod_sandbox_id());
  *create.mutable_config() = SleepingBusybox("sleeper");
  auto* mount = create.mutable_config()->add_mounts();
  mount->set_host_path(work / "hello.txt");
  mount->set_container_path("/data/hello.txt");
  mount->set_readonly(true);
  *create.mutable_sandbox_config() = run.config();
  v1::CreateContainerResponse created;
  const auto cs =
      proxied.runtime->CreateContainer(Deadline(std::chrono::seconds(60)).get(), create, &created);
  ASSERT_TRUE(cs.ok()) << cs.error_message();

  v1::StartContainerRequest start;
  start.set_container_id(created.container_id());
  v1::StartContainerResponse started;
  ASSERT_TRUE(
      proxied.runtime->StartContainer(Deadline(std::chrono::seconds(60)).get(), start, &started)
          .ok());

  v1::ExecSyncRequest exec;
  exec.set_container_id(created.container_id());
  exec.add_cmd("cat");
  exec.add_cmd("/data/hello.txt");
  exec.set_timeout(20);
  v1::ExecSyncResponse out;
  ASSERT_TRUE(proxied.runtime->ExecSync(Deadline(std::chrono::seconds(30)).get(), exec, &out).ok());
  EXPECT_EQ(out.stdout_data(), "hello from the host\n");
  EXPECT_EQ(out.exit_code(), 0);

  // A failing command: its exit code and stderr come back as containerd reported them.
  exec.clear_cmd();
  exec.add_cmd("sh");
  exec.add_cmd("-c");
  exec.add_cmd("echo oops >&2; exit 3");
  ASSERT_TRUE(proxied.runtime->ExecSync(Deadline(std::chrono::seconds(30)).get(), exec, &out).ok());
  EXPECT_EQ(out.exit_code(), 3);
  EXPECT_EQ(out.stderr_data(), "oops\n");

  v1::ContainerStatusRequest status;
  status.set_container_id(created.container_id());
  const auto st = ExpectSame(&v1::RuntimeService::Stub::ContainerStatus, *direct.runtime,
                             *proxied.runtime, status);
  EXPECT_EQ(st.status().state(), v1::CONTAINER_RUNNING);
  ASSERT_EQ(st.status().mounts_size(), 1);
  EXPECT_EQ(st.status().mounts(0).container_path(), "/data/hello.txt");

  v1::ListContainersRequest list;
  list.mutable_filter()->set_pod_sandbox_id(pod.pod_sandbox_id());
  const auto listed = ExpectSame(&v1::RuntimeService::Stub::ListContainers, *direct.runtime,
                                 *proxied.runtime, list);
  ASSERT_EQ(listed.containers_size(), 1);
  EXPECT_EQ(listed.containers(0).id(), created.container_id());

  v1::StopContainerRequest stop;
  stop.set_container_id(created.container_id());
  stop.set_timeout(0);
  v1::StopContainerResponse stopped;
  ASSERT_TRUE(
      proxied.runtime->StopContainer(Deadline(std::chrono::seconds(60)).get(), stop, &stopped)
          .ok());
  v1::RemoveContainerRequest remove;
  remove.set_container_id(created.container_id());
  v1::RemoveContainerResponse removed;
  ASSERT_TRUE(
      proxied.runtime->RemoveContainer(Deadline(std::chrono::seconds(60)).get(), remove, &removed)
          .ok());
  const auto after = ExpectSame(&v1::RuntimeService::Stub::ListContainers, *direct.runtime,
                                *proxied.runtime, list);
  EXPECT_EQ(after.containers_size(), 0);

  v1::StopPodSandboxRequest stop_pod;
  stop_pod.set_pod_sandbox_id(pod.pod_sandbox_id());
  v1::StopPodSandboxResponse pod_stopped;
  ASSERT_TRUE(proxied.runtime
                  ->StopPodSandbox(Deadline(std::chrono::seconds(60)).get(), stop_pod, &pod_stopped)
                  .ok());
  v1::RemovePodSandboxRequest remove_pod;
  remove_pod.set_pod_sandbox_id(pod.pod_sandbox_id());
  v1::RemovePodSandboxResponse pod_removed;
  ASSERT_TRUE(
      proxied.runtime
          ->RemovePodSandbox(Deadline(std::chrono::seconds(60)).get(), remove_pod, &pod_removed)
          .ok());

  // Errors come back verbatim too: the pod is gone.
  v1::PodSandboxStatusResponse gone;
  const auto gone_status = proxied.runtime->PodSandboxStatus(
      Deadline(std::chrono::seconds(10)).get(), pod_status, &gone);
  EXPECT_EQ(gone_status.error_code(), grpc::StatusCode::NOT_FOUND);
  ExpectSame(&v1::RuntimeService::Stub::PodSandboxStatus, *direct.runtime, *proxied.runtime,
             pod_status);
}

TEST_F(Passthrough, GetContainerEventsStatusIsContainerdsOwn) {
  auto read_status = [](CriClient& client) {
    auto ctx = Deadline(std::chrono::seconds(10));
    auto reader = client.runtime->GetContainerEvents(ctx.get(), v1::GetEventsRequest());
    v1::ContainerEventResponse event;
    while (reader->Read(&event)) {
    }
    return reader->Finish();
  };
  const auto direct_status = read_status(direct);
  const auto proxied_status = read_status(proxied);
  // Debian's containerd 1.6 does not implement it; kubelet relies on seeing exactly that.
  EXPECT_EQ(direct_status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(proxied_status.error_code(), direct_status.error_code());
  EXPECT_EQ(proxied_status.error_message(), direct_status.error_message());
}

TEST_F(Passthrough, UnknownMethodsAndServicesAnswerAsContainerd) {
  for (const std::string method :
       {"/runtime.v1.RuntimeService/StreamContainers", "/runtime.v1.RuntimeService/NoSuchMethod",
        "/no.such.Service/Method", "/containerd.services.version.v1.Version/Version"}) {
    SCOPED_TRACE(method);
    std::string direct_response, proxied_response;
    const auto s1 = direct.Raw(method, "", &direct_response);
    const auto s2 = proxied.Raw(method, "", &proxied_response);
    EXPECT_EQ(s1.error_code(), s2.error_code());
    EXPECT_EQ(s1.error_message(), s2.error_message());
    EXPECT_EQ(direct_response, proxied_response);
  }
  // containerd's own API (not CRI) works through dxshim as well.
  std::string version;
  EXPECT_TRUE(proxied.Raw("/containerd.services.version.v1.Version/Version", "", &version).ok());
  EXPECT_NE(version.find("1.6"), std::string::npos);
}

TEST_F(Passthrough, ManyConcurrentClientsSeeNoErrors) {
  constexpr int kClients = 64;
  constexpr int kCallsEach = 200;
  std::atomic<int> errors{0};
  std::atomic<int> calls{0};
  std::string first_error;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      CriClient client(g_dxshim->socket());
      for (int n = 0; n < kCallsEach; ++n) {
        grpc::Status s;
        switch ((i + n) % 3) {
          case 0: {
            v1::VersionResponse r;
            s = client.Version(&r, std::chrono::seconds(60));
            break;
          }
          case 1: {
            v1::ListContainersResponse r;
            s = client.runtime->ListContainers(Deadline(std::chrono::seconds(60)).get(), {}, &r);
            break;
          }
          default: {
            v1::ImageStatusRequest req;
            req.mutable_image()->set_image(kPauseImage);
            v1::ImageStatusResponse r;
            s = client.images->ImageStatus(Deadline(std::chrono::seconds(60)).get(), req, &r);
            if (s.ok() && !r.has_image()) s = grpc::Status(grpc::StatusCode::INTERNAL, "no image");
          }
        }
        ++calls;
        if (!s.ok()) {
          ++errors;
          std::lock_guard lock(mu);
          if (first_error.empty()) first_error = s.error_message();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(calls.load(), kClients * kCallsEach);
  EXPECT_EQ(errors.load(), 0) << first_error;
}

int ConnectRaw(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_F(Passthrough, GarbageAndHalfOpenConnectionsDoNotHurt) {
  std::mt19937 rng(42);
  std::vector<int> open_fds;
  for (int i = 0; i < 40; ++i) {
    const int fd = ConnectRaw(g_dxshim->socket());
    ASSERT_GE(fd, 0);
    std::string bytes;
    switch (i % 4) {
      case 0:  // random bytes
        for (int b = 0; b < 4096; ++b) bytes.push_back(static_cast<char>(rng() & 0xff));
        break;
      case 1:  // a truncated HTTP/2 preface
        bytes = "PRI * HTTP/2.0\r\n\r";
        break;
      case 2:  // a valid preface followed by a bogus frame header
        bytes = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                std::string("\xff\xff\xff\x09\x00", 5);
        break;
      default:  // nothing at all: half-open
        break;
    }
    if (!bytes.empty()) {
      ASSERT_GT(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), 0);
    }
    if (i % 2 == 0) ::shutdown(fd, SHUT_WR);
    open_fds.push_back(fd);
  }
  // While those connections hang around, real clients are served.
  v1::VersionResponse v;
  EXPECT_TRUE(proxied.Version(&v).ok());
  for (int fd : open_fds) ::close(fd);
  EXPECT_TRUE(proxied.Version(&v).ok());
  EXPECT_TRUE(g_dxshim->process().running());
}

}  // namespace
}  // namespace dxshim::test
