// An in-process gRPC server standing in for the runtime where containerd cannot show a
// behaviour: real server streaming (containerd 1.6 has no GetContainerEvents), responses larger
// than containerd produces, calls that block until released, deadlines and metadata as the runtime
// receives them. Real gRPC over a real unix socket; only the runtime's logic is scripted.
//
// Behaviour is chosen by the caller's metadata:
//   GetContainerEvents: streams events numbered 0,1,2,... ; "x-count: N" ends after N events with
//     OK; "x-fail-after: K" ends after K events with RESOURCE_EXHAUSTED and trailer
//     "x-trailer: stream-failed"; with neither it streams until cancelled.
//   Version: echoes every "x-*" request header as initial metadata "echo-<key>" and trailing
//     metadata "trailer-<key>"; "x-fail: CODE" fails with that code, message "fake failure" and
//     error details "fake-details".
//   ListContainers: "x-bytes: N" answers with containers whose total size exceeds N bytes.
//   Status: never answers; records the deadline it saw, and notices the cancellation.
//   PullImage: blocks until Release(), then answers image_ref "pulled".
#pragma once

#include <grpcpp/server.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace dxshim::test {

class FakeRuntime {
 public:
  explicit FakeRuntime(const std::string& socket_path);
  ~FakeRuntime();

  const std::string& socket() const { return socket_; }
  // Waits until `count` calls of GetContainerEvents or Status were cancelled by their caller.
  bool WaitForCancellations(int count, std::chrono::milliseconds timeout);
  std::optional<std::chrono::system_clock::time_point> status_deadline();
  int pulls_started() const;
  void ReleasePulls();

  struct State;

 private:
  std::string socket_;
  std::shared_ptr<State> state_;
  std::unique_ptr<grpc::Service> runtime_service_;
  std::unique_ptr<grpc::Service> image_service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace dxshim::test
