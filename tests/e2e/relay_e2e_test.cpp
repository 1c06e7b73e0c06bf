// Behaviours containerd 1.6 cannot show, through the real dxshim binary against an in-process
// gRPC runtime (tests/support/fake_runtime.h): server streaming, cancellation, error statuses with
// trailers, large responses, deadlines, metadata, slow calls and shutdown.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <future>

#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"
#include "tests/support/fake_runtime.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;

class Streaming : public ::testing::Test {
 protected:
  TempDir dir;
  FakeRuntime runtime{dir / "runtime.sock"};
  DxshimProcess dxshim{dir / "dxshim.sock",
                       runtime.socket(),
                       dir / "dxshim.log",
                       {"--shutdown-grace", "60s", "--log-level", "debug"}};
  CriClient client{dxshim.socket()};
  CriClient direct{runtime.socket()};

  // A PullImage that the runtime holds until ReleasePulls(); yields its image_ref or the error.
  std::future<std::string> StartPull() {
    return std::async(std::launch::async, [this] {
      v1::PullImageRequest req;
      req.mutable_image()->set_image("slow/image:1");
      v1::PullImageResponse resp;
      auto s = client.images->PullImage(Deadline(std::chrono::seconds(120)).get(), req, &resp);
      return s.ok() ? resp.image_ref() : "error: " + s.error_message();
    });
  }
};

TEST_F(Streaming, ThousandsOfEventsArriveInOrder) {
  constexpr int kEvents = 5000;
  auto ctx = Deadline(std::chrono::seconds(60));
  ctx->AddMetadata("x-count", std::to_string(kEvents));
  auto reader = client.runtime->GetContainerEvents(ctx.get(), v1::GetEventsRequest());
  v1::ContainerEventResponse event;
  int n = 0;
  bool in_order = true;
  while (reader->Read(&event)) {
    in_order = in_order && event.container_id() == std::to_string(n) && event.created_at() == n;
    ++n;
  }
  const auto status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(n, kEvents);
  EXPECT_TRUE(in_order);
}

TEST_F(Streaming, CallerCancellingMidStreamCancelsTheRuntimeStream) {
  auto ctx = Deadline(std::chrono::seconds(60));
  auto reader = client.runtime->GetContainerEvents(ctx.get(), v1::GetEventsRequest());
  v1::ContainerEventResponse event;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(reader->Read(&event));
  ctx->TryCancel();
  while (reader->Read(&event)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(runtime.WaitForCancellations(1, std::chrono::seconds(20)))
      << "the runtime's stream was not cancelled";
}

TEST_F(Streaming, RuntimeErrorStatusAndTrailersReachTheCaller) {
  auto ctx = Deadline(std::chrono::seconds(60));
  ctx->AddMetadata("x-fail-after", "10");
  auto reader = client.runtime->GetContainerEvents(ctx.get(), v1::GetEventsRequest());
  v1::ContainerEventResponse event;
  int n = 0;
  while (reader->Read(&event)) ++n;
  const auto status = reader->Finish();
  EXPECT_EQ(n, 10);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(), "fake runtime: out of events");
  const auto& trailers = ctx->GetServerTrailingMetadata();
  auto it = trailers.find("x-trailer");
  ASSERT_NE(it, trailers.end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), "stream-failed");
}

TEST_F(Streaming, ResponsesLargerThanTheDefaultLimitPassThrough) {
  constexpr long kBytes = 8L << 20;
  v1::ListContainersResponse via_proxy, via_direct;
  auto ctx = Deadline(std::chrono::seconds(60));
  ctx->AddMetadata("x-bytes", std::to_string(kBytes));
  const auto s = client.runtime->ListContainers(ctx.get(), {}, &via_proxy);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GT(static_cast<long>(via_proxy.ByteSizeLong()), kBytes);
  auto ctx2 = Deadline(std::chrono::seconds(60));
  ctx2->AddMetadata("x-bytes", std::to_string(kBytes));
  ASSERT_TRUE(direct.runtime->ListContainers(ctx2.get(), {}, &via_direct).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(via_proxy, via_direct));
}

TEST_F(Streaming, DeadlineReachesTheRuntime) {
  const auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(500);
  grpc::ClientContext ctx;
  ctx.set_deadline(deadline);
  v1::StatusResponse response;
  const auto s = client.runtime->Status(&ctx, {}, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  const auto seen = runtime.status_deadline();
  ASSERT_TRUE(seen.has_value()) << "the call never reached the runtime";
  // gRPC carries a deadline as a relative timeout (rounded up) that each hop turns back into an
  // absolute time on arrival, so the runtime's copy is the caller's plus the time the two hops
  // took. The window only tells "the caller's deadline arrived" from "none" or "a proxy-made one";
  // it is wide so that a loaded machine cannot fail it.
  EXPECT_LE(*seen, deadline + std::chrono::seconds(1));
  EXPECT_GT(*seen, deadline - std::chrono::seconds(5));
  EXPECT_TRUE(runtime.WaitForCancellations(1, std::chrono::seconds(20)));
}

TEST_F(Streaming, MetadataStatusAndDetailsAreVerbatim) {
  const std::string binary("\x00\x01\xfe\xff", 4);
  auto call = [&](CriClient& c, grpc::ClientContext& ctx, bool fail) {
    ctx.AddMetadata("x-request-id", "abc-123");
    ctx.AddMetadata("x-blob-bin", binary);
    if (fail) ctx.AddMetadata("x-fail", "9");
    v1::VersionResponse r;
    return c.runtime->Version(&ctx, {}, &r);
  };
  grpc::ClientContext ok_ctx;
  ASSERT_TRUE(call(client, ok_ctx, false).ok());
  const auto& initial = ok_ctx.GetServerInitialMetadata();
  const auto& trailing = ok_ctx.GetServerTrailingMetadata();
  ASSERT_EQ(initial.count("echo-x-request-id"), 1u);
  EXPECT_EQ(initial.find("echo-x-request-id")->second, "abc-123");
  ASSERT_EQ(initial.count("echo-x-blob-bin"), 1u);
  EXPECT_EQ(initial.find("echo-x-blob-bin")->second, binary);
  ASSERT_EQ(trailing.count("trailer-x-request-id"), 1u);
  EXPECT_EQ(trailing.find("trailer-x-blob-bin")->second, binary);

  grpc::ClientContext proxied_ctx, direct_ctx;
  const auto proxied_status = call(client, proxied_ctx, true);
  const auto direct_status = call(direct, direct_ctx, true);
  EXPECT_EQ(proxied_status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(proxied_status.error_message(), direct_status.error_message());
  EXPECT_EQ(proxied_status.error_details(), "fake-details");
  EXPECT_EQ(proxied_ctx.GetServerTrailingMetadata().count("trailer-x-request-id"), 1u);
}

TEST_F(Streaming, ASlowCallDoesNotDelayOthers) {
  auto pull = StartPull();
  ASSERT_TRUE(WaitFor([&] { return runtime.pulls_started() == 1; }, std::chrono::seconds(20)));
  for (int i = 0; i < 50; ++i) {
    v1::VersionResponse v;
    ASSERT_TRUE(client.Version(&v).ok());
  }
  // All of them were answered while the pull was still held by the runtime.
  EXPECT_EQ(pull.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  runtime.ReleasePulls();
  EXPECT_EQ(pull.get(), "pulled");
}

TEST_F(Streaming, SigtermCancelsStreamsAndLetsUnaryCallsFinish) {
  auto stream_ctx = Deadline(std::chrono::seconds(120));
  auto reader = client.runtime->GetContainerEvents(stream_ctx.get(), v1::GetEventsRequest());
  v1::ContainerEventResponse event;
  ASSERT_TRUE(reader->Read(&event));

  auto pull = StartPull();
  ASSERT_TRUE(WaitFor([&] { return runtime.pulls_started() == 1; }, std::chrono::seconds(20)));

  dxshim.process().Signal(SIGTERM);
  // The stream ends without waiting for the 60 s grace period...
  while (reader->Read(&event)) {
  }
  EXPECT_FALSE(reader->Finish().ok());
  EXPECT_TRUE(runtime.WaitForCancellations(1, std::chrono::seconds(20)));
  // ...while the pull in flight is still allowed to finish.
  EXPECT_TRUE(dxshim.process().running());
  runtime.ReleasePulls();
  EXPECT_EQ(pull.get(), "pulled");
  EXPECT_EQ(dxshim.process().Wait(std::chrono::seconds(30)), 0) << dxshim.process().Log();
}

}  // namespace
}  // namespace dxshim::test
