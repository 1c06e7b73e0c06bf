// One line of `dxshim doctor`: what was checked, how it stands, what was seen, and for a failure
// or a warning what to do about it.
#pragma once

#include <string>
#include <vector>

namespace dxshim::doctor {

enum class Status { kOk, kWarning, kFailed };

// "ok", "warning", "failed" (the JSON output's words).
const char* StatusWord(Status status);

struct Check {
  std::string check;  // what was checked, e.g. "kubelet"
  Status status = Status::kOk;
  std::string detail;  // what was seen
  std::string fix;     // what to do (failures and warnings)
};

using Checks = std::vector<Check>;

inline Check Ok(std::string check, std::string detail) {
  return {std::move(check), Status::kOk, std::move(detail), {}};
}
inline Check Warning(std::string check, std::string detail, std::string fix) {
  return {std::move(check), Status::kWarning, std::move(detail), std::move(fix)};
}
inline Check Failed(std::string check, std::string detail, std::string fix) {
  return {std::move(check), Status::kFailed, std::move(detail), std::move(fix)};
}

// 0 when no check failed, 1 otherwise.
int ExitCode(const Checks& checks);

}  // namespace dxshim::doctor
