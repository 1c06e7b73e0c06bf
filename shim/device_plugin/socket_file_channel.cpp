#include "shim/device_plugin/socket_file_channel.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "shim/socket_bridge/own_connections.h"
#include "shim/socket_bridge/socket_file.h"

namespace dxshim::device_plugin {

SocketFileChannel::SocketFileChannel(std::string path, PluginSockets sockets, std::string what)
    : path_(std::move(path)), sockets_(sockets), what_(std::move(what)) {}

SocketFileChannel::~SocketFileChannel() { Stop(); }

void SocketFileChannel::Stop() {
  if (forwarder_) forwarder_->Stop();
}

std::string SocketFileChannel::Target(std::string& error) {
  if (sockets_ == PluginSockets::kGrpcUnix) return "unix://" + path_;
  if (forwarder_) return target_;
  std::uint16_t port = 0;
  auto listener = socket_bridge::ListenLoopback(port, error);
  if (!listener.valid()) return {};
  const auto family = FamilyOf(sockets_);
  const auto warn = [](const std::string& line) { spdlog::warn("device plugin: {}", line); };
  // The loopback port is this process's way to the socket file: a connection from anybody else
  // (any local process can reach 127.0.0.1) is refused before a byte goes on.
  forwarder_ = std::make_unique<socket_bridge::SocketForwarder>(
      std::move(listener), what_ + " with " + path_,
      [path = path_, family](std::string& dial_error, std::string& /*served_as*/) {
        return socket_bridge::ConnectToSocketFile(path, family, dial_error);
      },
      [warn, what = what_](socket_bridge::NativeSocket client) {
        std::string refusal;
        if (socket_bridge::PeerIsThisProcess(client, refusal)) return true;
        warn("refused a connection to the " + what + " bridge: " + refusal);
        return false;
      },
      warn);
  target_ = "ipv4:127.0.0.1:" + std::to_string(port);
  spdlog::info("device plugin: {} through 127.0.0.1:{}, bridged to {} ({})", what_, port, path_,
               socket_bridge::ToString(family));
  return target_;
}

std::string SocketStem(const std::string& endpoint) {
  const auto dot = endpoint.rfind(".sock");
  return dot == std::string::npos ? endpoint : endpoint.substr(0, dot);
}

std::string FreshSocketName(const std::string& endpoint) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return SocketStem(endpoint) + "-" + std::to_string(ms) + ".sock";
}

bool IsFreshSocketName(const std::string& name, const std::string& endpoint) {
  const auto prefix = SocketStem(endpoint) + "-";
  constexpr std::string_view suffix = ".sock";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      !name.ends_with(suffix)) {
    return false;
  }
  const auto digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return digits.find_first_not_of("0123456789") == std::string::npos;
}

std::string ServedSocket(const std::string& dir, const std::string& endpoint,
                         PluginSockets sockets) {
  std::error_code ec;
  if (sockets == PluginSockets::kGrpcUnix) {
    const auto path = (std::filesystem::path(dir) / endpoint).string();
    return std::filesystem::exists(path, ec) ? path : std::string();
  }
  // The newest: the same number of digits until the year 2286, so the longest, then the largest.
  std::string newest;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!IsFreshSocketName(name, endpoint)) continue;
    if (newest.empty() || name.size() > newest.size() ||
        (name.size() == newest.size() && name > newest)) {
      newest = name;
    }
  }
  return newest.empty() ? newest : (std::filesystem::path(dir) / newest).string();
}

}  // namespace dxshim::device_plugin
