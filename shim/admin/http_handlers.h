// What the operator's HTTP endpoint (http_endpoint.h) asks of the rest of dxshim: the text of
// /metrics, what /readyz still misses, and where to report what it closed or refused. serve
// wires them to the metrics registry and the node's state; the endpoint knows neither.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "shim/admin/http_refusal.h"

namespace dxshim::admin {

struct HttpHandlers {
  std::function<std::string()> metrics;                 // the exposition text
  std::function<std::vector<std::string>()> not_ready;  // empty when ready
  // Each connection closed and request refused, on the endpoint's thread; may be empty.
  std::function<void(HttpRefusal)> refused;
};

}  // namespace dxshim::admin
