// "HOST:PORT", the one form of a TCP address in dxshim's configuration and its messages: an IPv4
// address or a name before the last ':', an IPv6 address in brackets ("[::1]:9464"), a port from
// 0 to 65535 after it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace dxshim {

struct HostPort {
  std::string host;  // without the brackets of an IPv6 address
  std::uint16_t port = 0;
  bool bracketed = false;  // the host was written in brackets (an IPv6 address)

  // The host as written: "[::1]" for an IPv6 address, else the host itself.
  std::string HostText() const;
  // The host to connect to on this node: a wildcard address (0.0.0.0, ::), which a server may
  // listen on but nobody can dial, becomes the loopback address of its family.
  std::string DialHost() const;
};

// `text` as HOST:PORT, or why it is not: "no port", "empty host", "unterminated IPv6 address",
// "expected ':PORT' after the IPv6 address", "an IPv6 address must be in brackets, ...", "the
// port is not a number from 0 to 65535" (callers put it in their own message).
std::variant<HostPort, std::string> ParseHostPort(std::string_view text);
// The HOST of `text` as written ("[::1]" with its brackets), for messages about an address that
// was checked already; `text` itself when it is not HOST:PORT.
std::string HostTextOf(std::string_view text);

// An IPv4 address in dotted decimal ("127.0.0.1"): four numbers from 0 to 255.
bool IsIpv4Address(std::string_view host);
// An IPv6 address as written between brackets: hex digits, ':' and '.' (not checked further).
bool LooksLikeIpv6Address(std::string_view host);

}  // namespace dxshim
