// The calls in flight, so that shutdown can cancel long-lived streams instead of waiting for them.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_set>

namespace dxshim {

class ActiveCall {
 public:
  virtual std::string_view method() const = 0;
  // Thread-safe, and never calls back into the registry.
  virtual void Cancel() = 0;

 protected:
  ~ActiveCall() = default;
};

class CallRegistry {
 public:
  void Add(ActiveCall* call);
  void Remove(ActiveCall* call);
  std::size_t size() const;
  // Cancels every call whose method satisfies `select`; returns how many.
  std::size_t CancelIf(const std::function<bool(std::string_view method)>& select);

 private:
  mutable std::mutex mu_;
  std::unordered_set<ActiveCall*> calls_;
};

}  // namespace dxshim
