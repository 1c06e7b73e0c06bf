// What the relay tells an observer (dxshim's metrics) about its calls and its runtime connection.
// The relay knows nothing of what the observer does with it. Both are called on the relay's one
// thread, which carries every call: an observer must only count, never wait.
#pragma once

#include <grpc/grpc.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <string_view>

namespace dxshim {

class ProxyObserver {
 public:
  virtual ~ProxyObserver() = default;
  // A call's answer is on its way to the caller: `method` is the full gRPC method name, `code`
  // what the caller gets (the runtime's status, or dxshim's own refusal), `elapsed` the time from
  // accepting the call to answering it.
  virtual void CallAnswered(std::string_view method, grpc::StatusCode code,
                            std::chrono::steady_clock::duration elapsed) = 0;
  // The channel to the runtime changed state (also called once with the initial state).
  virtual void RuntimeState(grpc_connectivity_state state) = 0;
};

}  // namespace dxshim
