#include "shim/admin/fault_log.h"

#include <utility>

namespace dxshim::admin {

FaultLog::FaultLog(Writer write, std::chrono::milliseconds interval)
    : write_(std::move(write)), interval_(interval) {}

void FaultLog::Note(const std::string& what, const std::string& peer, const std::string& detail,
                    Clock::time_point now) {
  ++counts_[what];
  last_ = peer.empty() ? detail : detail.empty() ? peer : peer + ": " + detail;
  Flush(now);
}

void FaultLog::Flush(Clock::time_point now) {
  if (counts_.empty() || (wrote_ && now - last_line_ < interval_)) return;
  std::string line = "metrics endpoint: ";
  bool first = true;
  for (const auto& [what, count] : counts_) {
    line.append(first ? "" : ", ").append(std::to_string(count)).append(" x ").append(what);
    first = false;
  }
  line.append(" (last: ").append(last_).append(")");
  counts_.clear();
  last_line_ = now;
  wrote_ = true;
  write_(line);
}

}  // namespace dxshim::admin
