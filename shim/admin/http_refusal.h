// Why the operator's HTTP endpoint closed a connection or refused a request, as its series counts
// it (dxshim_http_refusals_total{reason}, refusal_metrics.h). A small fixed set: no client chooses
// a label. Header only: the endpoint reports through HttpHandlers::refused and knows nothing of
// the registry.
#pragma once

namespace dxshim::admin {

enum class HttpRefusal {
  kRequestTimeout,    // no complete request within the request bound: 408, closed
  kResponseTimeout,   // the answer was not taken within the response bound: cut off
  kPerAddressLimit,   // closed for a newer connection from its own address
  kTotalLimit,        // closed for a newer connection over the total (its address the busiest)
  kFdLimit,           // accepting paused: dxshim had no file descriptor left
  kTooLarge,          // a request head over the bound: 431
  kMalformed,         // not an HTTP/1.x request: 400
  kMethodNotAllowed,  // a method other than GET and HEAD: 405
  kInternalError,     // the endpoint failed on it (a failing scrape's 500, or closed)
};
inline constexpr HttpRefusal kAllHttpRefusals[] = {
    HttpRefusal::kRequestTimeout, HttpRefusal::kResponseTimeout,  HttpRefusal::kPerAddressLimit,
    HttpRefusal::kTotalLimit,     HttpRefusal::kFdLimit,          HttpRefusal::kTooLarge,
    HttpRefusal::kMalformed,      HttpRefusal::kMethodNotAllowed, HttpRefusal::kInternalError};
// The label value: "request_timeout", "per_address_limit", ...
constexpr const char* ToString(HttpRefusal refusal) {
  switch (refusal) {
    case HttpRefusal::kRequestTimeout:
      return "request_timeout";
    case HttpRefusal::kResponseTimeout:
      return "response_timeout";
    case HttpRefusal::kPerAddressLimit:
      return "per_address_limit";
    case HttpRefusal::kTotalLimit:
      return "total_limit";
    case HttpRefusal::kFdLimit:
      return "fd_limit";
    case HttpRefusal::kTooLarge:
      return "too_large";
    case HttpRefusal::kMalformed:
      return "malformed";
    case HttpRefusal::kMethodNotAllowed:
      return "method_not_allowed";
    case HttpRefusal::kInternalError:
      return "internal_error";
  }
  return "unknown";
}

}  // namespace dxshim::admin
