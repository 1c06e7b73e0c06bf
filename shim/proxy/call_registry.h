// The long-lived streams in flight (GetContainerEvents, Stream*), so that shutdown can cancel them
// at once instead of waiting out the grace period. Unary calls are not registered: they finish by
// themselves within the grace period, and registering them would cost every call a lock.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_set>

namespace dxshim {

class ActiveCall {
 public:
  // Thread-safe, and never calls back into the registry.
  virtual void Cancel() = 0;

 protected:
  ~ActiveCall() = default;
};

class CallRegistry {
 public:
  void Add(ActiveCall* call);
  void Remove(ActiveCall* call);
  // Cancels every registered call; returns how many.
  std::size_t CancelAll();

 private:
  mutable std::mutex mu_;
  std::unordered_set<ActiveCall*> calls_;
};

}  // namespace dxshim
