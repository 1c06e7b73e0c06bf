// A plain HTTP/1.1 client for tests of dxshim's metrics endpoint and of a Prometheus server:
// one request per connection over loopback TCP, the whole answer read until the server closes.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace dxshim::test {

struct HttpResponse {
  int status = 0;                              // 0: no connection, or no HTTP answer
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// `address` is "HOST:PORT" (an IPv4 address, or an IPv6 one in brackets). Never throws: a failure
// is status 0 with the reason in body, and so is an answer not complete within `timeout` (a
// probe's timeoutSeconds).
HttpResponse HttpRequest(const std::string& address, const std::string& method,
                         const std::string& path,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10));
inline HttpResponse HttpGet(const std::string& address, const std::string& path,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  return HttpRequest(address, "GET", path, timeout);
}

// "HOST:PORT" of the metrics endpoint a dxshim's log announces ("metrics: serving
// http://127.0.0.1:PORT/metrics", "http://[::1]:PORT/metrics"), or "" when it does not; the last
// one announced when the log spans restarts.
std::string MetricsAddress(const std::string& log);

// The value of the first sample of `name` in Prometheus text `exposition` whose labels include
// every `key="value"` in `labels`; NaN when there is none.
double Sample(const std::string& exposition, const std::string& name,
              const std::vector<std::string>& labels = {});

}  // namespace dxshim::test
