// Completion-queue tags: every asynchronous gRPC operation dxshim starts carries a CallTag, and the
// thread that drains the completion queue calls Complete() with the operation's outcome.
#pragma once

namespace dxshim {

class CallTag {
 public:
  virtual void Complete(bool ok) = 0;

 protected:
  ~CallTag() = default;
};

}  // namespace dxshim
