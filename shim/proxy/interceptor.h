// Where the proxy lets a request be changed: a request of a unary method the interceptor wants
// (CreateContainer, to rewrite it; pod sandbox runs, stops and removals, to observe them) is
// handed to a RequestInterceptor before it goes to the runtime. Everything else is relayed as
// opaque bytes. The proxy's other hooks change nothing: ProxyObserver (proxy_observer.h) is told
// of calls and of the runtime connection, ProxyOptions::admit_peer admits or refuses callers.
#pragma once

#include <grpcpp/support/status.h>

#include <functional>
#include <string>
#include <string_view>

namespace dxshim {

inline constexpr std::string_view kCreateContainerMethod =
    "/runtime.v1.RuntimeService/CreateContainer";

// What an interceptor decided for one request.
struct Interception {
  enum class Action {
    kForward,  // send the caller's bytes unchanged (byte-identical, never re-encoded)
    kReplace,  // send `request` instead
    kReject,   // answer the caller with `status`; the runtime is not called
  };
  Action action = Action::kForward;
  std::string request;
  grpc::Status status;
  // Called once the runtime answered a forwarded or replaced request, with its status and its
  // response message (empty when there was none), so that an interceptor can commit or release
  // what it reserved for this request.
  std::function<void(const grpc::Status&, std::string_view response)> on_result;

  static Interception Forward() { return {}; }
  static Interception Replace(std::string request) {
    Interception i;
    i.action = Action::kReplace;
    i.request = std::move(request);
    return i;
  }
  static Interception Reject(grpc::Status status) {
    Interception i;
    i.action = Action::kReject;
    i.status = std::move(status);
    return i;
  }
};

class RequestInterceptor {
 public:
  virtual ~RequestInterceptor() = default;
  // Whether calls of `method` (a unary CRI method) go through Intercept; all others are relayed
  // without looking.
  virtual bool Wants(std::string_view method) const { return method == kCreateContainerMethod; }
  // `method` is the full gRPC method name and `request` the serialized request message.
  // Runs on the relay thread, which carries every call: it may compute and stat local files, but
  // must never wait on the network or on other calls (the GPU interceptor's one longer wait,
  // re-reading the device source after a driver change, happens at most once a second).
  virtual Interception Intercept(std::string_view method, std::string_view request) = 0;
};

}  // namespace dxshim
