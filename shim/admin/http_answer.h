// The answers of the operator's HTTP endpoint (http_endpoint.h): what a complete request gets
// (/metrics, /healthz, /readyz; 404 for any other path; 405 with Allow for a method other than
// GET and HEAD; 500 when a handler fails), and the plain answers the endpoint sends when it
// refuses a request itself (400, 408, 431).
//
// /metrics is rendered at most once per `metrics_max_age` and that one answer is shared by every
// scrape within it: a flood of scrapes costs one rendering, and the probes on the same thread
// wait for no more than that.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "shim/admin/http_handlers.h"
#include "shim/admin/http_refusal.h"
#include "shim/admin/http_request.h"

namespace dxshim::admin {

// The bytes of a whole response (status line, headers, body); connections given the same answer
// share it.
using HttpAnswer = std::shared_ptr<const std::string>;

// The exception being handled, as text for a log line or a 500 (`unknown` for one that is not a
// std::exception). Only called inside a catch block.
std::string HandledException(std::string_view unknown = "an exception of an unknown type");

// A text/plain response, closing the connection; without the body when `head`.
std::string PlainResponse(int status, std::string_view reason, std::string_view body,
                          bool head = false);

class HttpAnswers {
 public:
  using Clock = std::chrono::steady_clock;
  struct Reply {
    HttpAnswer answer;
    std::optional<HttpRefusal> refusal;  // what the reply refused, to be counted
  };

  // `handlers` must outlive this object.
  HttpAnswers(const HttpHandlers& handlers, std::chrono::milliseconds metrics_max_age);

  // The reply to a complete request head received at `now`. Never throws for a handler's failure
  // (that is a 500).
  Reply For(const HttpRequestReader& request, Clock::time_point now);

 private:
  Reply Metrics(bool head, Clock::time_point now);
  Reply Readiness(bool head) const;

  const HttpHandlers& handlers_;
  std::chrono::milliseconds metrics_max_age_;
  Reply metrics_get_;  // the last rendering, answered until it is metrics_max_age_ old
  Reply metrics_head_;
  Clock::time_point rendered_at_{};
};

}  // namespace dxshim::admin
