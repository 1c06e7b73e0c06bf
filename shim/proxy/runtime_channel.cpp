#include "shim/proxy/runtime_channel.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <spdlog/spdlog.h>

namespace dxshim {

std::shared_ptr<grpc::Channel> DialRuntime(const Endpoint& runtime,
                                           std::chrono::milliseconds max_backoff) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  const int max_ms = static_cast<int>(std::max<std::int64_t>(max_backoff.count(), 100));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(100, max_ms));
  // GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is left at gRPC's default: despite its name it is the
  // minimum time a connection attempt gets (20 s; the subchannel's min_connect_timeout). At 100 ms
  // a connection through the Windows pipe forwarder, or to a busy runtime on a loaded node, timed
  // out before the runtime's HTTP/2 SETTINGS arrived (pipe_transport_e2e_test under load).
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max_ms);
  // Retrying is the caller's decision (kubelet has its own policy); a proxy that retried would
  // replay non-idempotent calls such as CreateContainer.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // Keep the target's name out of the authority header for unix sockets.
  if (runtime.kind == Endpoint::Kind::kUnix)
    args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, "localhost");
  return grpc::CreateCustomChannel(runtime.GrpcTarget(), grpc::InsecureChannelCredentials(), args);
}

namespace {

const char* Describe(grpc_connectivity_state state) {
  switch (state) {
    case GRPC_CHANNEL_IDLE:
      return "idle";
    case GRPC_CHANNEL_CONNECTING:
      return "connecting";
    case GRPC_CHANNEL_READY:
      return "connected";
    case GRPC_CHANNEL_TRANSIENT_FAILURE:
      return "unavailable (retrying with backoff)";
    case GRPC_CHANNEL_SHUTDOWN:
      return "shut down";
  }
  return "unknown";
}

}  // namespace

ConnectivityLog::ConnectivityLog(std::shared_ptr<grpc::Channel> channel, std::string runtime,
                                 grpc::CompletionQueue* cq, ProxyObserver* observer)
    : channel_(std::move(channel)), runtime_(std::move(runtime)), cq_(cq), observer_(observer) {
  // Connect eagerly, so that the first kubelet call does not pay for it.
  state_ = channel_->GetState(/*try_to_connect=*/true);
  logged_ = state_;
  if (observer_ != nullptr) observer_->RuntimeState(state_);
  Arm();
}

void ConnectivityLog::Arm() {
  // A bounded wait, so that Stop() takes effect within a quarter of a second.
  channel_->NotifyOnStateChange(state_,
                                std::chrono::system_clock::now() + std::chrono::milliseconds(250),
                                cq_, static_cast<CallTag*>(this));
}

void ConnectivityLog::Complete(bool changed) {
  if (changed) {
    const auto next = channel_->GetState(/*try_to_connect=*/true);
    // CONNECTING is a step on the way to something else, and each retry of a runtime that stays
    // down repeats the last state: only a different outcome is worth a line.
    if (next != GRPC_CHANNEL_CONNECTING && next != logged_) {
      logged_ = next;
      const auto level =
          next == GRPC_CHANNEL_TRANSIENT_FAILURE ? spdlog::level::warn : spdlog::level::info;
      spdlog::log(level, "runtime {}: {}", runtime_, Describe(next));
    }
    if (observer_ != nullptr && next != state_) observer_->RuntimeState(next);
    state_ = next;
  }
  if (stopping_) {
    done_ = true;
  } else {
    Arm();
  }
}

}  // namespace dxshim
