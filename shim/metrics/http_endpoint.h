// The operator's HTTP endpoint of `dxshim serve` (metrics-listen): /metrics in Prometheus' text
// format, /healthz (200 while the process serves) and /readyz (200 once the runtime is connected,
// the ledger read and the devices loaded; 503 with the missing parts otherwise). Served by
// civetweb on threads of its own, never the relay's; no document root, so no file is ever served,
// and any other path is 404.
#pragma once

#include <functional>
#include <string>
#include <vector>

struct mg_context;
struct mg_connection;

namespace dxshim::metrics {

struct HttpHandlers {
  std::function<std::string()> metrics;                 // the exposition text
  std::function<std::vector<std::string>()> not_ready;  // empty when ready
};

class HttpEndpoint {
 public:
  // `listen` is "HOST:PORT" (HOST an IPv4 address, or an IPv6 one in brackets; PORT 0 picks a free
  // one). Throws std::runtime_error naming the address when it cannot listen.
  HttpEndpoint(const std::string& listen, HttpHandlers handlers);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }

 private:
  static int Handle(mg_connection* conn, void* self);
  int Serve(mg_connection* conn) const;

  HttpHandlers handlers_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace dxshim::metrics
