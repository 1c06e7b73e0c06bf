// What clients of the operator's endpoint did wrong (requests that did not arrive in time,
// connections over a limit, malformed requests), logged at most once per interval however much
// happens: each line counts what happened since the one before and names the last case, so that
// no client can fill dxshim's log.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>

namespace dxshim::admin {

class FaultLog {
 public:
  using Clock = std::chrono::steady_clock;
  using Writer = std::function<void(const std::string&)>;

  // `write` gets each line (serve: a warning in dxshim's log).
  explicit FaultLog(Writer write, std::chrono::milliseconds interval = std::chrono::seconds(1));

  // One fault of kind `what` ("requests not complete within 2000 ms") by `peer` ("" when no
  // client is to blame), with `detail` ("" when the kind says it all).
  void Note(const std::string& what, const std::string& peer, const std::string& detail,
            Clock::time_point now);
  // Writes the line that is due, if any: called as time passes.
  void Flush(Clock::time_point now);

 private:
  Writer write_;
  std::chrono::milliseconds interval_;
  std::map<std::string, std::size_t> counts_;
  std::string last_;
  Clock::time_point last_line_{};
  bool wrote_ = false;
};

}  // namespace dxshim::admin
