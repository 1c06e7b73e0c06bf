#include "tests/support/fake_runtime.h"

#include <grpcpp/grpcpp.h>

#include <thread>

#include "runtime/v1/api.grpc.pb.h"

namespace dxshim::test {

namespace v1 = runtime::v1;

struct FakeRuntime::State {
  std::mutex mu;
  std::condition_variable cv;
  int cancellations = 0;
  int pulls_started = 0;
  bool pulls_released = false;
  std::optional<std::chrono::system_clock::time_point> status_deadline;
  std::vector<grpc::ServerUnaryReactor*> blocked_pulls;

  void NoteCancel() {
    std::lock_guard lock(mu);
    ++cancellations;
    cv.notify_all();
  }
};

namespace {

std::optional<std::string> Header(grpc::CallbackServerContext* ctx, const std::string& key) {
  const auto& md = ctx->client_metadata();
  auto it = md.find(key);
  if (it == md.end()) return std::nullopt;
  return std::string(it->second.data(), it->second.size());
}

class EventStream final : public grpc::ServerWriteReactor<v1::ContainerEventResponse> {
 public:
  EventStream(grpc::CallbackServerContext* ctx, std::shared_ptr<FakeRuntime::State> state)
      : state_(std::move(state)), ctx_(ctx) {
    // Each reaction holds the lock: gRPC runs them one at a time, an order libgrpc keeps where
    // ThreadSanitizer cannot see it (scripts/test-sanitizers.sh); the lock makes it visible.
    std::lock_guard lock(mutex_);
    if (auto n = Header(ctx, "x-count")) limit_ = std::stol(*n);
    if (auto k = Header(ctx, "x-fail-after")) {
      limit_ = std::stol(*k);
      fail_ = true;
    }
    if (limit_ == 0) {
      End();
    } else {
      Next();
    }
  }
  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mutex_);
    if (!ok) {  // the caller went away; the reactor must still finish for OnDone to come
      Finish(grpc::Status::CANCELLED);
      return;
    }
    if (limit_ >= 0 && sent_ >= limit_) {
      End();
    } else {
      Next();
    }
  }
  void OnCancel() override {
    std::lock_guard lock(mutex_);
    state_->NoteCancel();
  }
  void OnDone() override {
    { std::lock_guard lock(mutex_); }
    delete this;
  }

 private:
  void Next() {
    event_.set_container_id(std::to_string(sent_));
    event_.set_created_at(sent_);
    ++sent_;
    StartWrite(&event_);
  }
  void End() {
    if (fail_) {
      ctx_->AddTrailingMetadata("x-trailer", "stream-failed");
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "fake runtime: out of events"));
    } else {
      Finish(grpc::Status::OK);
    }
  }

  std::mutex mutex_;
  std::shared_ptr<FakeRuntime::State> state_;
  grpc::CallbackServerContext* ctx_ = nullptr;
  v1::ContainerEventResponse event_;
  long limit_ = -1;
  long sent_ = 0;
  bool fail_ = false;
};

class BlockedStatus final : public grpc::ServerUnaryReactor {
 public:
  // The lock orders the reactions as EventStream's does.
  explicit BlockedStatus(std::shared_ptr<FakeRuntime::State> state) {
    std::lock_guard lock(mutex_);
    state_ = std::move(state);
  }
  void OnCancel() override {
    std::lock_guard lock(mutex_);
    state_->NoteCancel();
    Finish(grpc::Status::CANCELLED);
  }
  void OnDone() override {
    { std::lock_guard lock(mutex_); }
    delete this;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<FakeRuntime::State> state_;
};

class RuntimeService final : public v1::RuntimeService::CallbackService {
 public:
  explicit RuntimeService(std::shared_ptr<FakeRuntime::State> state) : state_(std::move(state)) {}

  grpc::ServerWriteReactor<v1::ContainerEventResponse>* GetContainerEvents(
      grpc::CallbackServerContext* ctx, const v1::GetEventsRequest*) override {
    return new EventStream(ctx, state_);
  }

  grpc::ServerUnaryReactor* Version(grpc::CallbackServerContext* ctx, const v1::VersionRequest*,
                                    v1::VersionResponse* response) override {
    for (const auto& [key, value] : ctx->client_metadata()) {
      const std::string k(key.data(), key.size());
      if (k.rfind("x-", 0) != 0) continue;
      const std::string v(value.data(), value.size());
      ctx->AddInitialMetadata("echo-" + k, v);
      ctx->AddTrailingMetadata("trailer-" + k, v);
    }
    auto* reactor = ctx->DefaultReactor();
    if (auto code = Header(ctx, "x-fail")) {
      reactor->Finish(grpc::Status(static_cast<grpc::StatusCode>(std::stoi(*code)), "fake failure",
                                   "fake-details"));
      return reactor;
    }
    response->set_runtime_name("fake");
    response->set_runtime_version("0.0.0");
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* ListContainers(grpc::CallbackServerContext* ctx,
                                           const v1::ListContainersRequest*,
                                           v1::ListContainersResponse* response) override {
    const long bytes = std::stol(Header(ctx, "x-bytes").value_or("0"));
    const std::string filler(4096, 'x');
    while (static_cast<long>(response->ByteSizeLong()) <= bytes) {
      auto* c = response->add_containers();
      c->set_id("c" + std::to_string(response->containers_size()));
      (*c->mutable_annotations())["filler"] = filler;
    }
    auto* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* ctx, const v1::StatusRequest*,
                                   v1::StatusResponse*) override {
    {
      std::lock_guard lock(state_->mu);
      state_->status_deadline = ctx->deadline();
    }
    return new BlockedStatus(state_);
  }

 private:
  std::shared_ptr<FakeRuntime::State> state_;
};

class ImageService final : public v1::ImageService::CallbackService {
 public:
  explicit ImageService(std::shared_ptr<FakeRuntime::State> state) : state_(std::move(state)) {}

  grpc::ServerUnaryReactor* PullImage(grpc::CallbackServerContext* ctx, const v1::PullImageRequest*,
                                      v1::PullImageResponse* response) override {
    response->set_image_ref("pulled");
    auto* reactor = ctx->DefaultReactor();
    std::lock_guard lock(state_->mu);
    ++state_->pulls_started;
    state_->cv.notify_all();
    if (state_->pulls_released) {
      reactor->Finish(grpc::Status::OK);
    } else {
      state_->blocked_pulls.push_back(reactor);
    }
    return reactor;
  }

 private:
  std::shared_ptr<FakeRuntime::State> state_;
};

}  // namespace

FakeRuntime::FakeRuntime(const std::string& socket_path)
    : socket_(socket_path), state_(std::make_shared<State>()) {
  runtime_service_ = std::make_unique<RuntimeService>(state_);
  image_service_ = std::make_unique<ImageService>(state_);
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(runtime_service_.get());
  builder.RegisterService(image_service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) throw std::runtime_error("fake runtime cannot listen on " + socket_path);
}

FakeRuntime::~FakeRuntime() {
  ReleasePulls();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server_->Wait();
}

bool FakeRuntime::WaitForCancellations(int count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->cancellations >= count; });
}

std::optional<std::chrono::system_clock::time_point> FakeRuntime::status_deadline() {
  std::lock_guard lock(state_->mu);
  return state_->status_deadline;
}

int FakeRuntime::pulls_started() const {
  std::lock_guard lock(state_->mu);
  return state_->pulls_started;
}

void FakeRuntime::ReleasePulls() {
  std::vector<grpc::ServerUnaryReactor*> pulls;
  {
    std::lock_guard lock(state_->mu);
    state_->pulls_released = true;
    pulls.swap(state_->blocked_pulls);
  }
  for (auto* r : pulls) r->Finish(grpc::Status::OK);
}

}  // namespace dxshim::test
