// The operator's HTTP endpoint of `dxshim serve` (metrics-listen): /metrics in Prometheus' text
// format, /healthz (200 while the process serves) and /readyz (200 once the runtime is connected,
// the ledger read and the devices loaded; 503 with the missing parts otherwise); any other path is
// 404, a method other than GET and HEAD 405 (http_answer.h). No file is ever served.
//
// One thread of its own (never the relay's) serves every connection without blocking on any:
// a slow or silent client costs a socket, not a thread, and cannot delay anyone else. Each request
// must arrive within a bound (2 s) and its answer be taken within another (10 s); connections are
// bounded per peer address and in total, and a new connection over a bound closes the oldest one
// of its own address (or, over the total, of the addresses holding the most), so that clients
// from one address cannot displace a probe from another. With no file descriptor left, accepting
// pauses until a connection closes (1 s at most) rather than spinning on a listener that stays
// readable. What clients do wrong is logged at most once per second, and each refusal reported
// (HttpHandlers::refused). Whatever the thread throws (std::bad_alloc, a handler's failure) ends
// neither it nor dxshim: a connection it was serving is closed at most.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "shim/admin/http_handlers.h"

namespace dxshim::admin {

struct HttpLimits {
  std::chrono::milliseconds request_timeout{2000};    // from accept to a complete request head
  std::chrono::milliseconds response_timeout{10000};  // for the client to take the answer
  std::size_t max_connections = 256;
  std::size_t max_per_peer = 32;
  std::chrono::milliseconds metrics_max_age{1000};  // one rendering of /metrics answers this long
};

class HttpEndpoint {
 public:
  // `listen` is "HOST:PORT" (HOST an IPv4 address, or an IPv6 one in brackets; PORT 0 picks a free
  // one). Throws std::runtime_error naming the address when it cannot listen.
  HttpEndpoint(const std::string& listen, HttpHandlers handlers, HttpLimits limits = {});
  ~HttpEndpoint();  // stops serving within 0.1 s; every connection is closed
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }

 private:
  class Server;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace dxshim::admin
