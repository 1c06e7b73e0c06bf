#include "shim/proxy/cri_callers.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace dxshim {

void CriCallers::Called(const CriClient& client) {
  Called(client, std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count());
}

void CriCallers::OnFirstCallOf(std::string program,
                               std::function<void(const CriClient&)> callback) {
  std::lock_guard lock(mutex_);
  watched_program_ = std::move(program);
  on_first_call_ = std::move(callback);
}

void CriCallers::Called(const CriClient& client, std::int64_t now_unix_ms) {
  std::function<void(const CriClient&)> first;
  {
    std::lock_guard lock(mutex_);
    if (!Record(client, now_unix_ms) || !on_first_call_ || client.program != watched_program_) {
      return;
    }
    first = std::move(on_first_call_);
    on_first_call_ = nullptr;
  }
  first(client);
}

// True when `client` is new.
bool CriCallers::Record(const CriClient& client, std::int64_t now_unix_ms) {
  const auto it = std::find_if(records_.begin(), records_.end(),
                               [&](const CriCallerRecord& r) { return r.client == client; });
  if (it != records_.end()) {
    ++it->calls;
    it->last_call_unix_ms = now_unix_ms;
    return false;
  }
  if (!records_.empty() && records_.size() >= capacity_) {
    records_.erase(std::min_element(records_.begin(), records_.end(),
                                    [](const CriCallerRecord& a, const CriCallerRecord& b) {
                                      return a.last_call_unix_ms < b.last_call_unix_ms;
                                    }));
  }
  records_.push_back({client, 1, now_unix_ms, now_unix_ms});
  return true;
}

std::vector<CriCallerRecord> CriCallers::Snapshot() const {
  std::lock_guard lock(mutex_);
  return records_;
}

}  // namespace dxshim
