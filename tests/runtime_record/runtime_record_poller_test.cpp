// The runtime record's poller (shim/runtime_record/runtime_record_poller.h) against a stand-in
// runtime: a real gRPC server on a real unix socket whose ListPodSandbox and ListContainers
// answers the test scripts (containerd cannot be told to fail one listing or to hang). Proves: one
// listing hands the consumer what the runtime said (the record, the sandboxes' handlers, the
// counts), `starting` first and the timer after; a runtime that is down or fails either listing
// hands nothing on and is reported as a failure, and is listed again once it answers (by itself,
// retrying); polling hands on each change the runtime shows; Kick lists at once however long the
// interval; destroying the poller cancels a listing the runtime never answers and hands nothing
// on. Nothing is mocked: no GPU is involved.
#include "shim/runtime_record/runtime_record_poller.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/v1/api.grpc.pb.h"
#include "shim/base/dxshim_keys.h"
#include "tests/support/temp_dir.h"

namespace dxshim {
namespace {

namespace v1 = runtime::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;
// The bound of every wait: generous, never what a test asserts.
constexpr auto kWait = seconds(30);
constexpr milliseconds kHour{3600 * 1000};

// The runtime: answers what the test set, fails a listing with the code set, or holds
// ListPodSandbox until its caller cancels.
class ScriptedRuntime final : public v1::RuntimeService::Service {
 public:
  explicit ScriptedRuntime(const std::string& socket) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    EXPECT_NE(server_, nullptr);
  }
  ~ScriptedRuntime() override {
    {
      std::lock_guard lock(mutex_);
      hold_ = false;
    }
    cv_.notify_all();
    server_->Shutdown(std::chrono::system_clock::now() + seconds(5));
    server_->Wait();
  }
  ScriptedRuntime(const ScriptedRuntime&) = delete;
  ScriptedRuntime& operator=(const ScriptedRuntime&) = delete;

  // A ready sandbox of pod `uid`, run by `handler`.
  void AddSandbox(const std::string& id, const std::string& uid, const std::string& handler) {
    std::lock_guard lock(mutex_);
    auto* s = sandboxes_.add_items();
    s->set_id(id);
    s->set_state(v1::SANDBOX_READY);
    s->set_runtime_handler(handler);
    s->mutable_metadata()->set_name("pod-" + id);
    s->mutable_metadata()->set_namespace_("default");
    s->mutable_metadata()->set_uid(uid);
  }
  // A running container of `sandbox`, given `devices` by dxshim (its label), or none ("").
  void AddContainer(const std::string& id, const std::string& sandbox, const std::string& devices) {
    std::lock_guard lock(mutex_);
    auto* c = containers_.add_containers();
    c->set_id(id);
    c->set_pod_sandbox_id(sandbox);
    c->set_state(v1::CONTAINER_RUNNING);
    c->mutable_metadata()->set_name("app-" + id);
    if (!devices.empty()) (*c->mutable_labels())[keys::kDevicesLabel] = devices;
  }
  void ClearContainers() {
    std::lock_guard lock(mutex_);
    containers_.clear_containers();
  }
  void FailSandboxes(grpc::StatusCode code) {
    std::lock_guard lock(mutex_);
    fail_sandboxes_ = code;
  }
  void FailContainers(grpc::StatusCode code) {
    std::lock_guard lock(mutex_);
    fail_containers_ = code;
  }
  void Hold() {
    std::lock_guard lock(mutex_);
    hold_ = true;
  }
  // Waits until a held ListPodSandbox has come.
  bool WaitForHeldCall() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kWait, [&] { return held_calls_ > 0; });
  }
  // How many held calls ended because their caller cancelled them.
  int cancelled() {
    std::lock_guard lock(mutex_);
    return cancelled_;
  }

  grpc::Status ListPodSandbox(grpc::ServerContext* context, const v1::ListPodSandboxRequest*,
                              v1::ListPodSandboxResponse* response) override {
    std::unique_lock lock(mutex_);
    if (hold_) {
      ++held_calls_;
      cv_.notify_all();
      while (hold_ && !context->IsCancelled()) cv_.wait_for(lock, milliseconds(10));
      if (context->IsCancelled()) ++cancelled_;
      return {grpc::StatusCode::CANCELLED, "held"};
    }
    if (fail_sandboxes_ != grpc::StatusCode::OK) return {fail_sandboxes_, "scripted failure"};
    *response = sandboxes_;
    return grpc::Status::OK;
  }
  grpc::Status ListContainers(grpc::ServerContext*, const v1::ListContainersRequest*,
                              v1::ListContainersResponse* response) override {
    std::lock_guard lock(mutex_);
    if (fail_containers_ != grpc::StatusCode::OK) return {fail_containers_, "scripted failure"};
    *response = containers_;
    return grpc::Status::OK;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  v1::ListPodSandboxResponse sandboxes_;
  v1::ListContainersResponse containers_;
  grpc::StatusCode fail_sandboxes_ = grpc::StatusCode::OK;
  grpc::StatusCode fail_containers_ = grpc::StatusCode::OK;
  bool hold_ = false;
  int held_calls_ = 0;
  int cancelled_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// What the poller handed its consumer and its timer, in order.
class Consumer {
 public:
  RuntimeRecordPoller::Consumer Feed() {
    RuntimeRecordPoller::Consumer feed;
    feed.starting = [this] {
      std::lock_guard lock(mutex_);
      events_.emplace_back("starting");
    };
    feed.listed = [this](const RuntimeRecordPoller::Listing& listing) {
      {
        std::lock_guard lock(mutex_);
        events_.emplace_back("listed");
        listings_.push_back(listing);
      }
      cv_.notify_all();
      return HoldingPods(listing.record);
    };
    return feed;
  }
  RuntimeRecordPoller::ResyncTimer Timer() {
    return [this](bool ok, std::chrono::steady_clock::duration) {
      {
        std::lock_guard lock(mutex_);
        events_.emplace_back(ok ? "ok" : "failed");
      }
      cv_.notify_all();
    };
  }
  // Waits until `done(listings, events)` holds.
  bool WaitFor(const std::function<bool(const std::vector<RuntimeRecordPoller::Listing>&,
                                        const std::vector<std::string>&)>& done) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kWait, [&] { return done(listings_, events_); });
  }
  std::vector<std::string> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::vector<RuntimeRecordPoller::Listing> listings() {
    std::lock_guard lock(mutex_);
    return listings_;
  }
  std::size_t count(const std::string& event) {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count(events_.begin(), events_.end(), event));
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
  std::vector<RuntimeRecordPoller::Listing> listings_;
};

class RuntimeRecordPollerTest : public ::testing::Test {
 protected:
  std::unique_ptr<RuntimeRecordPoller> MakePoller(milliseconds interval) {
    auto poller = std::make_unique<RuntimeRecordPoller>(ParseEndpoint("unix://" + socket_),
                                                        interval, consumer_.Feed(), "test");
    poller->set_resync_timer(consumer_.Timer());
    return poller;
  }

  test::TempDir dir_;
  const std::string socket_ = dir_ / "runtime.sock";
  Consumer consumer_;
};

TEST_F(RuntimeRecordPollerTest, OneListingHandsTheConsumerWhatTheRuntimeSaid) {
  ScriptedRuntime runtime(socket_);
  runtime.AddSandbox("s1", "uid-1", "runhcs-wcow-process");
  runtime.AddSandbox("s2", "uid-2", "");
  runtime.AddContainer("c1", "s1", "gpu-0,gpu-1");
  runtime.AddContainer("c2", "s2", "");
  auto poller = MakePoller(kHour);
  ASSERT_TRUE(poller->SyncOnce(kWait));
  EXPECT_EQ(consumer_.events(), (std::vector<std::string>{"starting", "listed", "ok"}));
  const auto listings = consumer_.listings();
  ASSERT_EQ(listings.size(), 1u);
  const auto& listing = listings[0];
  EXPECT_EQ(listing.sandboxes, 2);
  EXPECT_EQ(listing.containers, 2);
  EXPECT_EQ(listing.record.ready_sandboxes, (std::set<std::string>{"s1", "s2"}));
  EXPECT_EQ(listing.record.pod_uids.at("s1"), "uid-1");
  EXPECT_EQ(listing.record.pod_names.at("s2"), "default/pod-s2");
  ASSERT_EQ(listing.record.containers.size(), 1u);  // only the one dxshim gave devices
  EXPECT_EQ(listing.record.containers[0].container_id, "c1");
  EXPECT_EQ(listing.record.containers[0].device_ids, (std::vector<std::string>{"gpu-0", "gpu-1"}));
  EXPECT_EQ(listing.sandbox_handlers.at("s1"), "runhcs-wcow-process");
}

TEST_F(RuntimeRecordPollerTest, ARuntimeThatIsDownFailsAndIsListedOnceItAnswers) {
  auto poller = MakePoller(kHour);
  EXPECT_FALSE(poller->SyncOnce(kWait, /*wait_for_runtime=*/false));
  EXPECT_EQ(consumer_.events(), (std::vector<std::string>{"starting", "failed"}));
  ScriptedRuntime runtime(socket_);
  runtime.AddSandbox("s1", "uid-1", "");
  EXPECT_TRUE(poller->SyncOnce(kWait));
  EXPECT_EQ(consumer_.count("listed"), 1u);
}

TEST_F(RuntimeRecordPollerTest, AFailureOfEitherListingHandsNothingOn) {
  ScriptedRuntime runtime(socket_);
  runtime.AddSandbox("s1", "uid-1", "");
  auto poller = MakePoller(kHour);
  runtime.FailSandboxes(grpc::StatusCode::INTERNAL);
  EXPECT_FALSE(poller->SyncOnce(kWait));
  runtime.FailSandboxes(grpc::StatusCode::OK);
  runtime.FailContainers(grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(poller->SyncOnce(kWait));
  EXPECT_EQ(consumer_.count("listed"), 0u);
  EXPECT_EQ(consumer_.count("failed"), 2u);
  runtime.FailContainers(grpc::StatusCode::OK);
  EXPECT_TRUE(poller->SyncOnce(kWait));
  EXPECT_EQ(consumer_.count("listed"), 1u);
}

TEST_F(RuntimeRecordPollerTest, PollingHandsOnEachChangeTheRuntimeShows) {
  ScriptedRuntime runtime(socket_);
  runtime.AddSandbox("s1", "uid-1", "");
  auto poller = MakePoller(milliseconds(20));
  ASSERT_TRUE(poller->SyncOnce(kWait));
  poller->Start();
  runtime.AddContainer("c1", "s1", "gpu-0");
  EXPECT_TRUE(consumer_.WaitFor([](const auto& listings, const auto&) {
    return listings.back().record.containers.size() == 1;
  }));
  runtime.ClearContainers();
  EXPECT_TRUE(consumer_.WaitFor(
      [](const auto& listings, const auto&) { return listings.back().record.containers.empty(); }));
}

TEST_F(RuntimeRecordPollerTest, KickListsAtOnceHoweverLongTheInterval) {
  ScriptedRuntime runtime(socket_);
  auto poller = MakePoller(kHour);
  ASSERT_TRUE(poller->SyncOnce(kWait));
  poller->Start();
  poller->Kick();
  EXPECT_TRUE(
      consumer_.WaitFor([](const auto& listings, const auto&) { return listings.size() == 2; }));
}

TEST_F(RuntimeRecordPollerTest, AFailingRuntimeIsRetriedUntilItAnswers) {
  ScriptedRuntime runtime(socket_);
  auto poller = MakePoller(kHour);
  ASSERT_TRUE(poller->SyncOnce(kWait));
  runtime.FailContainers(grpc::StatusCode::UNAVAILABLE);
  poller->Start();
  poller->Kick();
  ASSERT_TRUE(consumer_.WaitFor([](const auto&, const auto& events) {
    return std::count(events.begin(), events.end(), "failed") > 0;
  }));
  runtime.FailContainers(grpc::StatusCode::OK);
  // No kick, and the interval is an hour: the poller's own retry lists it.
  EXPECT_TRUE(
      consumer_.WaitFor([](const auto& listings, const auto&) { return listings.size() == 2; }));
}

TEST_F(RuntimeRecordPollerTest, DestroyingItCancelsAListingTheRuntimeNeverAnswers) {
  ScriptedRuntime runtime(socket_);
  auto poller = MakePoller(kHour);
  ASSERT_TRUE(poller->SyncOnce(kWait));
  runtime.Hold();
  poller->Start();
  poller->Kick();
  ASSERT_TRUE(runtime.WaitForHeldCall());
  poller.reset();  // returns only once the listing in flight is cancelled
  EXPECT_TRUE([&] {
    for (int i = 0; i < 3000 && runtime.cancelled() == 0; ++i)
      std::this_thread::sleep_for(milliseconds(10));
    return runtime.cancelled() == 1;
  }());
  // Nothing handed on, and the cancelled attempt is not reported as a failure.
  EXPECT_EQ(consumer_.count("listed"), 1u);
  EXPECT_EQ(consumer_.count("failed"), 0u);
}

}  // namespace
}  // namespace dxshim
