#include "shim/doctor/doctor_check.h"

#include <algorithm>

namespace dxshim::doctor {

const char* StatusWord(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kWarning:
      return "warning";
    case Status::kFailed:
      return "failed";
  }
  return "failed";
}

int ExitCode(const Checks& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const Check& c) { return c.status == Status::kFailed; })
             ? 1
             : 0;
}

}  // namespace dxshim::doctor
