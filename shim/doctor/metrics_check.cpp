#include "shim/doctor/metrics_check.h"

#include <variant>

#include "shim/base/host_port.h"
#include "shim/socket_bridge/http_get.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim::doctor {

Check CheckMetrics(const std::string& listen, std::chrono::milliseconds timeout) {
  const auto parsed = ParseHostPort(listen);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    return Failed("metrics", "metrics-listen " + listen + " is not HOST:PORT (" + *why + ")",
                  "give metrics-listen an IP address and a port, e.g. 127.0.0.1:9464");
  }
  const auto& address = std::get<HostPort>(parsed);
  const auto host = address.DialHost();
  const auto port = address.port;
  if (port == 0) {
    return Warning("metrics", "metrics-listen " + listen + " takes any free port: not known here",
                   "give metrics-listen a fixed port (dxshim's log names the one it took)");
  }
  const std::string url = "http://" + listen + "/readyz";
  const socket_bridge::NetworkSession winsock;  // Windows: started for this call
  const auto answer = socket_bridge::HttpGet(host, port, "/readyz", timeout);
  if (!answer) {
    return Failed("metrics", "nothing answers " + url,
                  "dxshim serves it while it runs: check the dxshim check above and its log "
                  "(\"metrics: serving\"); metrics-listen must be an address of this node");
  }
  std::string body = answer->body;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  if (answer->status != 200) {
    return Failed("metrics", url + " answers " + std::to_string(answer->status) + ": " + body,
                  "it names what dxshim is waiting for: the runtime, or the devices");
  }
  return Ok("metrics", url + " answers " + body);
}

}  // namespace dxshim::doctor
