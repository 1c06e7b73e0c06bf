#include "shim/proxy/call_registry.h"

namespace dxshim {

void CallRegistry::Add(ActiveCall* call) {
  std::lock_guard lock(mu_);
  calls_.insert(call);
}

void CallRegistry::Remove(ActiveCall* call) {
  std::lock_guard lock(mu_);
  calls_.erase(call);
}

std::size_t CallRegistry::CancelAll() {
  // Under the lock: a call removes itself before it is destroyed, so none can vanish meanwhile.
  std::lock_guard lock(mu_);
  for (auto* call : calls_) call->Cancel();
  return calls_.size();
}

}  // namespace dxshim
