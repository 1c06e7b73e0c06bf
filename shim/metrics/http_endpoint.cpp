#include "shim/metrics/http_endpoint.h"

#include <civetweb.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <stdexcept>
#include <string_view>

namespace dxshim::metrics {
namespace {

void Respond(mg_connection* conn, int status, std::string_view reason, std::string_view type,
             const std::string& body, bool head) {
  std::string response = "HTTP/1.1 " + std::to_string(status) + " ";
  response.append(reason).append("\r\nContent-Type: ").append(type);
  response.append("\r\nContent-Length: ").append(std::to_string(body.size()));
  response.append("\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n");
  if (!head) response += body;
  mg_write(conn, response.data(), response.size());
}

int LogToSpdlog(const mg_connection* /*conn*/, const char* message) {
  spdlog::warn("metrics endpoint: {}", message);
  return 1;
}

}  // namespace

HttpEndpoint::HttpEndpoint(const std::string& listen, HttpHandlers handlers)
    : handlers_(std::move(handlers)) {
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  const char* options[] = {
      "listening_ports", listen.c_str(),      "num_threads", "2",    "request_timeout_ms",
      "10000",           "enable_keep_alive", "no",          nullptr};
  mg_callbacks callbacks{};
  callbacks.log_message = LogToSpdlog;
  mg_init_data init_data{};
  init_data.callbacks = &callbacks;
  init_data.configuration_options = options;
  mg_error_data error{};
  char message[256] = {};
  unsigned code = 0;
  error.code = &code;
  error.text = message;
  error.text_buffer_size = sizeof(message);
  context_ = mg_start2(&init_data, &error);
  if (context_ == nullptr) {
    throw std::runtime_error("cannot serve metrics on " + listen + ": " +
                             (message[0] != '\0' ? message : "civetweb could not start"));
  }
  for (const char* path : {"/metrics$", "/healthz$", "/readyz$"}) {
    mg_set_request_handler(context_, path, &HttpEndpoint::Handle, this);
  }
  mg_server_port ports[1];
  if (mg_get_server_ports(context_, 1, ports) == 1) port_ = ports[0].port;
}

HttpEndpoint::~HttpEndpoint() {
  if (context_ != nullptr) mg_stop(context_);
}

int HttpEndpoint::Handle(mg_connection* conn, void* self) {
  return static_cast<HttpEndpoint*>(self)->Serve(conn);
}

int HttpEndpoint::Serve(mg_connection* conn) const {
  const auto* request = mg_get_request_info(conn);
  const std::string_view method = request->request_method;
  const std::string_view path = request->local_uri;
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    Respond(conn, 405, "Method Not Allowed", "text/plain; charset=utf-8", "only GET and HEAD\n",
            false);
    return 405;
  }
  try {
    if (path == "/metrics") {
      Respond(conn, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", handlers_.metrics(),
              head);
      return 200;
    }
    if (path == "/healthz") {
      Respond(conn, 200, "OK", "text/plain; charset=utf-8", "ok\n", head);
      return 200;
    }
    const auto missing = handlers_.not_ready();
    if (missing.empty()) {
      Respond(conn, 200, "OK", "text/plain; charset=utf-8", "ready\n", head);
      return 200;
    }
    std::string body = "not ready:\n";
    for (const auto& line : missing) body += "  " + line + "\n";
    Respond(conn, 503, "Service Unavailable", "text/plain; charset=utf-8", body, head);
    return 503;
  } catch (const std::exception& e) {
    Respond(conn, 500, "Internal Server Error", "text/plain; charset=utf-8",
            std::string(e.what()) + "\n", head);
    return 500;
  }
}

}  // namespace dxshim::metrics
