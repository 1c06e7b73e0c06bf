// `dxshim doctor`'s check 8: dxshim's metrics endpoint (metrics-listen) answers /readyz.
#pragma once

#include <chrono>
#include <string>

#include "shim/doctor/doctor_check.h"

namespace dxshim::doctor {

// `listen` is metrics-listen ("HOST:PORT", an IPv6 host bracketed); a wildcard host is asked on
// loopback. The whole answer must come within `timeout`.
Check CheckMetrics(const std::string& listen, std::chrono::milliseconds timeout);

}  // namespace dxshim::doctor
