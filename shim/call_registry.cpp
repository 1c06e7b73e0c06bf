#include "shim/call_registry.h"

#include <vector>

namespace dxshim {

void CallRegistry::Add(ActiveCall* call) {
  std::lock_guard lock(mu_);
  calls_.insert(call);
}

void CallRegistry::Remove(ActiveCall* call) {
  std::lock_guard lock(mu_);
  calls_.erase(call);
}

std::size_t CallRegistry::size() const {
  std::lock_guard lock(mu_);
  return calls_.size();
}

std::size_t CallRegistry::CancelIf(const std::function<bool(std::string_view)>& select) {
  std::vector<ActiveCall*> selected;
  {
    std::lock_guard lock(mu_);
    for (auto* call : calls_) {
      if (select(call->method()) && call->TryRef()) selected.push_back(call);
    }
  }
  // Cancel outside the lock: cancellation may finish a call, which removes it from the registry.
  for (auto* call : selected) {
    call->Cancel();
    call->Unref();
  }
  return selected.size();
}

}  // namespace dxshim
