#include "shim/gpu/sandbox_handlers.h"

namespace dxshim {

void SandboxHandlers::Started(const std::string& sandbox_id, const std::string& handler) {
  std::lock_guard lock(mutex_);
  sandboxes_[sandbox_id] = Entry{handler, ++sequence_};
}

void SandboxHandlers::Removed(const std::string& sandbox_id) {
  std::lock_guard lock(mutex_);
  sandboxes_.erase(sandbox_id);
}

std::uint64_t SandboxHandlers::Mark() {
  std::lock_guard lock(mutex_);
  return ++sequence_;
}

void SandboxHandlers::Reconcile(const std::map<std::string, std::string>& listed,
                                std::uint64_t mark) {
  std::lock_guard lock(mutex_);
  for (auto it = sandboxes_.begin(); it != sandboxes_.end();) {
    if (it->second.learned < mark && !listed.contains(it->first)) {
      it = sandboxes_.erase(it);
    } else {
      ++it;
    }
  }
  // A sandbox's handler never changes: what is known stays as it is.
  for (const auto& [id, handler] : listed) sandboxes_.try_emplace(id, Entry{handler, ++sequence_});
}

std::optional<std::string> SandboxHandlers::Find(const std::string& sandbox_id) const {
  std::lock_guard lock(mutex_);
  const auto it = sandboxes_.find(sandbox_id);
  if (it == sandboxes_.end()) return std::nullopt;
  return it->second.handler;
}

}  // namespace dxshim
