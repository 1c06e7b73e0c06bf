// Which runtime handler (RuntimeClass handler) runs each pod sandbox. A CreateContainerRequest
// does not say, so dxshim learns it where it does: from each RunPodSandbox it relays (request
// `runtime_handler`, response id) and, for sandboxes from before a restart or made behind its
// back, from the runtime's ListPodSandbox (`PodSandbox.runtime_handler`) at every ledger resync.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace dxshim {

class SandboxHandlers {
 public:
  // A sandbox the runtime started (the RunPodSandbox that dxshim relayed succeeded).
  void Started(const std::string& sandbox_id, const std::string& handler);
  // A sandbox the runtime removed.
  void Removed(const std::string& sandbox_id);
  // Before listing the runtime's sandboxes: a mark for Reconcile.
  std::uint64_t Mark();
  // What the runtime listed (id -> handler) after `mark` was taken: listed sandboxes are added,
  // and sandboxes known since before the mark that the runtime no longer has are dropped (one
  // started while the listing was under way is kept).
  void Reconcile(const std::map<std::string, std::string>& listed, std::uint64_t mark);
  // The handler of a sandbox ("" is the runtime's default), or nullopt when it is not known.
  std::optional<std::string> Find(const std::string& sandbox_id) const;

 private:
  struct Entry {
    std::string handler;
    std::uint64_t learned = 0;  // the sequence number when it was learned
  };
  mutable std::mutex mutex_;
  std::uint64_t sequence_ = 0;
  std::unordered_map<std::string, Entry> sandboxes_;
};

}  // namespace dxshim
