// What the operator's HTTP endpoint (http_endpoint.h) asks of the rest of dxshim: the text of
// /metrics and what /readyz still misses. serve wires them to the metrics registry and the node's
// state; the endpoint knows neither.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace dxshim::metrics {

struct HttpHandlers {
  std::function<std::string()> metrics;                 // the exposition text
  std::function<std::vector<std::string>()> not_ready;  // empty when ready
};

}  // namespace dxshim::metrics
