// The interception point, with the proxy library in-process and a runtime that records the exact
// bytes it receives (real gRPC over unix sockets on both legs).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <mutex>

#include "cri_superset.pb.h"
#include "shim/proxy/byte_buffer.h"
#include "shim/proxy/proxy_server.h"
#include "tests/support/cri_client.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;

// Answers every call with a CreateContainerResponse and remembers what it was sent. A request
// whose bytes contain "fail-upstream" is answered with ABORTED instead.
class RecordingRuntime {
 public:
  explicit RecordingRuntime(const std::string& socket) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~RecordingRuntime() { server_->Shutdown(); }

  std::vector<std::pair<std::string, std::string>> calls() {
    std::lock_guard lock(service_.mu);
    return service_.calls;
  }

 private:
  struct Service : grpc::CallbackGenericService {
    std::mutex mu;
    std::vector<std::pair<std::string, std::string>> calls;

    struct Call : grpc::ServerGenericBidiReactor {
      // Each reaction holds `lock_`: gRPC runs them one at a time, an order libgrpc keeps where
      // ThreadSanitizer cannot see it (scripts/test-sanitizers.sh); the lock makes it visible.
      Call(grpc::GenericCallbackServerContext* ctx, Service* s) : ctx_(ctx), service_(s) {
        std::lock_guard reacting(lock_);
        StartRead(&request_);
      }
      void OnReadDone(bool ok) override {
        std::lock_guard reacting(lock_);
        if (!ok) {
          Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"));
          return;
        }
        const auto bytes = ToBytes(request_);
        size_t n = 0;
        {
          std::lock_guard lock(service_->mu);
          service_->calls.emplace_back(ctx_->method(), bytes);
          n = service_->calls.size();
        }
        if (bytes.find("fail-upstream") != std::string::npos) {
          Finish(grpc::Status(grpc::StatusCode::ABORTED, "runtime refused"));
          return;
        }
        v1::CreateContainerResponse r;
        r.set_container_id("rec-" + std::to_string(n));
        response_ = FromBytes(r.SerializeAsString());
        StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
      }
      void OnDone() override {
        { std::lock_guard reacting(lock_); }
        delete this;
      }
      std::mutex lock_;
      grpc::GenericCallbackServerContext* ctx_;
      Service* service_;
      grpc::ByteBuffer request_, response_;
    };

    grpc::ServerGenericBidiReactor* CreateReactor(
        grpc::GenericCallbackServerContext* ctx) override {
      return new Call(ctx, this);
    }
  };
  Service service_;
  std::unique_ptr<grpc::Server> server_;
};

// An interceptor whose decision the test scripts; it records what it saw.
class ScriptedInterceptor : public RequestInterceptor {
 public:
  std::function<Interception(std::string_view)> decide = [](std::string_view) {
    return Interception::Forward();
  };
  std::vector<std::string> seen_methods;
  std::vector<std::pair<grpc::StatusCode, std::string>> results;
  std::mutex mu;

  // The relay's thread writes `results` (on_result); the test's own thread destroys them once
  // the answer came, an order the network keeps where ThreadSanitizer cannot see it.
  ~ScriptedInterceptor() override { std::lock_guard lock(mu); }

  Interception Intercept(std::string_view method, std::string_view request) override {
    auto decision = decide(request);
    std::lock_guard lock(mu);
    seen_methods.emplace_back(method);
    decision.on_result = [this](const grpc::Status& s, std::string_view response) {
      std::lock_guard l(mu);
      results.emplace_back(s.error_code(), std::string(response));
    };
    return decision;
  }
};

// Bytes a protobuf encoder would never produce (sandbox_config before pod_sandbox_id, a field
// from the future in between), so that any re-encoding on the way would show.
std::string NonCanonicalRequest(const std::string& marker = "") {
  dxshim::test::superset::CreateContainerRequest sandbox_part, id_part, future_part;
  (*sandbox_part.mutable_sandbox_config()->mutable_annotations())["example.com/x"] = "y";
  sandbox_part.mutable_config()->set_from_the_future("unknown to dxshim");
  sandbox_part.mutable_config()->mutable_metadata()->set_name("gpu-app" + marker);
  id_part.set_pod_sandbox_id("pod-123");
  future_part.set_future_extension(std::string("\x00\x10\x20", 3));
  return sandbox_part.SerializeAsString() + future_part.SerializeAsString() +
         id_part.SerializeAsString();
}

class Interception_ : public ::testing::Test {
 protected:
  void StartProxy(RequestInterceptor* interceptor) {
    ProxyOptions options;
    options.listen = ParseEndpoint(dir / "dxshim.sock");
    options.runtime = ParseEndpoint(dir / "runtime.sock");
    options.interceptor = interceptor;
    proxy = std::make_unique<ProxyServer>(options);
    proxy->Start();
    client = std::make_unique<CriClient>(dir / "dxshim.sock");
  }

  grpc::Status Create(const std::string& request, v1::CreateContainerResponse* response) {
    std::string bytes;
    auto s = client->Raw(std::string(kCreateContainerMethod), request, &bytes);
    if (s.ok()) response->ParseFromString(bytes);
    return s;
  }

  TempDir dir;
  RecordingRuntime runtime{dir / "runtime.sock"};
  std::unique_ptr<ProxyServer> proxy;
  std::unique_ptr<CriClient> client;
};

// The admission hook Windows uses to accept only calls that came through dxshim's named pipe
// (there the peer is checked against the pipe's bridges, under wine in windows_npipe_test).
// Here, over loopback TCP as on Windows: a refused peer gets PERMISSION_DENIED for any kind of
// call and the runtime never sees it.
TEST_F(Interception_, APeerTheEndpointDoesNotAdmitIsRefusedBeforeTheRuntime) {
  ProxyOptions options;
  options.listen = ParseEndpoint("tcp://127.0.0.1:0");
  options.runtime = ParseEndpoint(dir / "runtime.sock");
  std::mutex mu;
  std::vector<std::string> peers;
  bool admit = false;
  options.admit_peer = [&](std::string_view peer) {
    std::lock_guard lock(mu);
    peers.emplace_back(peer);
    return admit;
  };
  proxy = std::make_unique<ProxyServer>(options);
  proxy->Start();
  const auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(proxy->bound_port()),
                                           grpc::InsecureChannelCredentials());
  client = std::make_unique<CriClient>(dir / "unused.sock");
  client->generic = std::make_unique<grpc::GenericStub>(channel);

  v1::CreateContainerResponse response;
  auto s = Create(NonCanonicalRequest(), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  std::string ignored;
  s = client->Raw("/some.Unknown/Method", "x", &ignored);  // the general (streaming) relay
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_TRUE(runtime.calls().empty());

  {
    std::lock_guard lock(mu);
    admit = true;
    ASSERT_EQ(peers.size(), 2u);
    // The hook is given gRPC's name for the caller (what the bridges list: own_connections.h).
    EXPECT_TRUE(peers[0].starts_with("ipv4:127.0.0.1:")) << peers[0];
  }
  ASSERT_TRUE(Create(NonCanonicalRequest(), &response).ok());
  EXPECT_EQ(runtime.calls().size(), 1u);
}

TEST_F(Interception_, WithoutInterceptorTheRequestIsByteIdentical) {
  StartProxy(nullptr);
  const auto request = NonCanonicalRequest();
  v1::CreateContainerResponse response;
  ASSERT_TRUE(Create(request, &response).ok());
  EXPECT_EQ(response.container_id(), "rec-1");
  const auto calls = runtime.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, kCreateContainerMethod);
  EXPECT_EQ(calls[0].second, request);
}

TEST_F(Interception_, ForwardKeepsTheBytesAndReportsTheResult) {
  ScriptedInterceptor interceptor;
  std::string decoded_name;
  interceptor.decide = [&](std::string_view request) {
    v1::CreateContainerRequest parsed;  // an interceptor may look, and still forward
    parsed.ParseFromArray(request.data(), static_cast<int>(request.size()));
    decoded_name = parsed.config().metadata().name();
    return Interception::Forward();
  };
  StartProxy(&interceptor);
  const auto request = NonCanonicalRequest();
  v1::CreateContainerResponse response;
  ASSERT_TRUE(Create(request, &response).ok());
  EXPECT_EQ(decoded_name, "gpu-app");
  ASSERT_EQ(runtime.calls().size(), 1u);
  EXPECT_EQ(runtime.calls()[0].second, request);
  proxy->Shutdown();  // all calls finished: results are in
  ASSERT_EQ(interceptor.results.size(), 1u);
  EXPECT_EQ(interceptor.results[0].first, grpc::StatusCode::OK);
  v1::CreateContainerResponse reported;
  ASSERT_TRUE(reported.ParseFromString(interceptor.results[0].second));
  EXPECT_EQ(reported.container_id(), "rec-1");
}

TEST_F(Interception_, ReplaceSendsTheRewrittenRequest) {
  ScriptedInterceptor interceptor;
  std::string rewritten;
  interceptor.decide = [&](std::string_view request) {
    v1::CreateContainerRequest parsed;
    parsed.ParseFromArray(request.data(), static_cast<int>(request.size()));
    parsed.mutable_config()->add_devices()->set_host_path(
        "vpci-location-path://PCIROOT(0)#PCI(0100)");
    rewritten = parsed.SerializeAsString();
    return Interception::Replace(rewritten);
  };
  StartProxy(&interceptor);
  v1::CreateContainerResponse response;
  ASSERT_TRUE(Create(NonCanonicalRequest(), &response).ok());
  ASSERT_EQ(runtime.calls().size(), 1u);
  EXPECT_EQ(runtime.calls()[0].second, rewritten);
  dxshim::test::superset::CreateContainerRequest seen;
  ASSERT_TRUE(seen.ParseFromString(runtime.calls()[0].second));
  EXPECT_EQ(seen.config().from_the_future(), "unknown to dxshim");
  EXPECT_EQ(seen.config().devices(0).host_path(), "vpci-location-path://PCIROOT(0)#PCI(0100)");
}

TEST_F(Interception_, RejectAnswersTheCallerAndSparesTheRuntime) {
  ScriptedInterceptor interceptor;
  interceptor.decide = [](std::string_view) {
    return Interception::Reject(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                             "dxshim: no free GPU for container gpu-app"));
  };
  StartProxy(&interceptor);
  v1::CreateContainerResponse response;
  const auto s = Create(NonCanonicalRequest(), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "dxshim: no free GPU for container gpu-app");
  EXPECT_TRUE(runtime.calls().empty());
  proxy->Shutdown();
  EXPECT_TRUE(interceptor.results.empty());  // nothing was forwarded, nothing to commit
}

TEST_F(Interception_, RuntimeFailureIsReportedToTheInterceptorAndTheCaller) {
  ScriptedInterceptor interceptor;
  StartProxy(&interceptor);
  v1::CreateContainerResponse response;
  const auto s = Create(NonCanonicalRequest("fail-upstream"), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(s.error_message(), "runtime refused");
  proxy->Shutdown();
  ASSERT_EQ(interceptor.results.size(), 1u);
  EXPECT_EQ(interceptor.results[0].first, grpc::StatusCode::ABORTED);
}

TEST_F(Interception_, AThrowingInterceptorFailsOnlyThatCall) {
  ScriptedInterceptor interceptor;
  interceptor.decide = [](std::string_view) -> Interception {
    throw std::runtime_error("inventory snapshot missing");
  };
  StartProxy(&interceptor);
  v1::CreateContainerResponse response;
  const auto s = Create(NonCanonicalRequest(), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message(), "dxshim: inventory snapshot missing");
  EXPECT_TRUE(runtime.calls().empty());
  // The proxy is fine: other methods still pass.
  std::string out;
  EXPECT_TRUE(client->Raw("/runtime.v1.RuntimeService/Version", "", &out).ok());
}

TEST_F(Interception_, OnlyCreateContainerIsIntercepted) {
  ScriptedInterceptor interceptor;
  StartProxy(&interceptor);
  std::string out;
  for (const char* method :
       {"/runtime.v1.RuntimeService/Version", "/runtime.v1.RuntimeService/StartContainer",
        "/runtime.v1.ImageService/PullImage", "/other.Service/CreateContainer"}) {
    EXPECT_TRUE(client->Raw(method, NonCanonicalRequest(), &out).ok()) << method;
  }
  EXPECT_TRUE(interceptor.seen_methods.empty());
  const auto calls = runtime.calls();
  ASSERT_EQ(calls.size(), 4u);
  for (const auto& call : calls) EXPECT_EQ(call.second, NonCanonicalRequest());
}

}  // namespace
}  // namespace dxshim::test
