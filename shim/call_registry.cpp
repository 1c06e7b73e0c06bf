#include "shim/call_registry.h"

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
  // Under the lock: a call removes itself before it is destroyed, so none can vanish meanwhile.
  std::lock_guard lock(mu_);
  std::size_t cancelled = 0;
  for (auto* call : calls_) {
    if (!select(call->method())) continue;
    call->Cancel();
    ++cancelled;
  }
  return cancelled;
}

}  // namespace dxshim
