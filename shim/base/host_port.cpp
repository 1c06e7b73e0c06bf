#include "shim/base/host_port.h"

#include <charconv>

namespace dxshim {

std::string HostPort::HostText() const { return bracketed ? "[" + host + "]" : host; }

std::string HostPort::DialHost() const {
  if (host == "0.0.0.0") return "127.0.0.1";
  if (host == "::") return "::1";
  return host;
}

std::variant<HostPort, std::string> ParseHostPort(std::string_view text) {
  HostPort out;
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return std::string("unterminated IPv6 address");
    host = text.substr(1, close - 1);
    const auto rest = text.substr(close + 1);
    if (rest.empty()) return std::string("no port");
    if (rest.front() != ':') return std::string("expected ':PORT' after the IPv6 address");
    port = rest.substr(1);
    out.bracketed = true;
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::string("no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return std::string("an IPv6 address must be in brackets, e.g. [::1]:9464");
    }
  }
  if (host.empty()) return std::string("empty host");
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size()) {
    return std::string("the port is not a number from 0 to 65535");
  }
  out.host = std::string(host);
  return out;
}

std::string HostTextOf(std::string_view text) {
  const auto parsed = ParseHostPort(text);
  const auto* address = std::get_if<HostPort>(&parsed);
  return address ? address->HostText() : std::string(text);
}

bool IsIpv4Address(std::string_view host) {
  for (int i = 0; i < 4; ++i) {
    const auto dot = host.find('.');
    if ((i < 3) != (dot != std::string_view::npos)) return false;  // exactly three dots
    const auto part = host.substr(0, dot);
    unsigned octet = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), octet);
    if (part.empty() || part.size() > 3 || ec != std::errc() || end != part.data() + part.size() ||
        octet > 255) {
      return false;
    }
    if (dot != std::string_view::npos) host.remove_prefix(dot + 1);
  }
  return true;
}

bool LooksLikeIpv6Address(std::string_view host) {
  return !host.empty() && host.find(':') != std::string_view::npos &&
         host.find_first_not_of("0123456789abcdefABCDEF:.") == std::string_view::npos;
}

}  // namespace dxshim
