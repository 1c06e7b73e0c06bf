#include "shim/admin/http_answer.h"

#include <exception>
#include <utility>

namespace dxshim::admin {
namespace {

constexpr std::string_view kText = "text/plain; charset=utf-8";
constexpr std::string_view kExposition = "text/plain; version=0.0.4; charset=utf-8";

std::string Response(int status, std::string_view reason, std::string_view type,
                     std::string_view body, bool head, std::string_view more_headers = {}) {
  std::string response = "HTTP/1.1 " + std::to_string(status) + " ";
  response.append(reason).append("\r\nContent-Type: ").append(type);
  response.append("\r\nContent-Length: ").append(std::to_string(body.size()));
  response.append("\r\n").append(more_headers);
  response.append("Cache-Control: no-store\r\nConnection: close\r\n\r\n");
  if (!head) response.append(body);
  return response;
}

HttpAnswer Shared(std::string response) {
  return std::make_shared<const std::string>(std::move(response));
}

// A handler failed: the 500 says how, and is counted.
HttpAnswers::Reply Failed(const std::string& what, bool head) {
  return {Shared(PlainResponse(500, "Internal Server Error", what + "\n", head)),
          HttpRefusal::kInternalError};
}

}  // namespace

std::string HandledException(std::string_view unknown) {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return std::string(unknown);
  }
}

std::string PlainResponse(int status, std::string_view reason, std::string_view body, bool head) {
  return Response(status, reason, kText, body, head);
}

HttpAnswers::HttpAnswers(const HttpHandlers& handlers, std::chrono::milliseconds metrics_max_age)
    : handlers_(handlers), metrics_max_age_(metrics_max_age) {}

HttpAnswers::Reply HttpAnswers::For(const HttpRequestReader& request, Clock::time_point now) {
  const bool head = request.method() == "HEAD";
  if (request.method() != "GET" && !head) {
    // RFC 9110 15.5.6: a 405 names the methods the resource has.
    return {Shared(Response(405, "Method Not Allowed", kText, "only GET and HEAD\n", false,
                            "Allow: GET, HEAD\r\n")),
            HttpRefusal::kMethodNotAllowed};
  }
  const auto& path = request.path();
  if (path == "/metrics") return Metrics(head, now);
  if (path == "/healthz") return {Shared(PlainResponse(200, "OK", "ok\n", head)), {}};
  if (path == "/readyz") return Readiness(head);
  return {Shared(PlainResponse(404, "Not Found", "dxshim serves /metrics, /healthz and /readyz\n",
                               head)),
          {}};
}

HttpAnswers::Reply HttpAnswers::Metrics(bool head, Clock::time_point now) {
  if (!metrics_get_.answer || now - rendered_at_ >= metrics_max_age_) {
    try {
      const auto text = handlers_.metrics();
      metrics_get_ = {Shared(Response(200, "OK", kExposition, text, false)), {}};
      metrics_head_ = {Shared(Response(200, "OK", kExposition, text, true)), {}};
    } catch (...) {
      // Kept as long as a rendering would be: a failing collector is not asked again by every
      // scrape either.
      const auto what = HandledException("the handler failed");
      metrics_get_ = Failed(what, false);
      metrics_head_ = Failed(what, true);
    }
    rendered_at_ = now;
  }
  return head ? metrics_head_ : metrics_get_;
}

HttpAnswers::Reply HttpAnswers::Readiness(bool head) const {
  try {
    const auto missing = handlers_.not_ready();
    if (missing.empty()) return {Shared(PlainResponse(200, "OK", "ready\n", head)), {}};
    std::string body = "not ready:\n";
    for (const auto& line : missing) body += "  " + line + "\n";
    return {Shared(PlainResponse(503, "Service Unavailable", body, head)), {}};
  } catch (...) {
    return Failed(HandledException("the handler failed"), head);
  }
}

}  // namespace dxshim::admin
