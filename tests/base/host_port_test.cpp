// HOST:PORT (shim/base/host_port.h): IPv4, names and bracketed IPv6 hosts with a port from 0 to
// 65535; each malformed form is refused with the reason a caller puts in its message.
#include "shim/base/host_port.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace dxshim {
namespace {

HostPort Parsed(std::string_view text) {
  auto parsed = ParseHostPort(text);
  if (const auto* why = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << text << ": " << *why;
    return {};
  }
  return std::get<HostPort>(parsed);
}

std::string Refused(std::string_view text) {
  const auto parsed = ParseHostPort(text);
  const auto* why = std::get_if<std::string>(&parsed);
  if (!why) ADD_FAILURE() << text << " was accepted";
  return why ? *why : "";
}

TEST(HostPort, Ipv4NamesAndIpv6InBrackets) {
  struct Case {
    const char* text;
    const char* host;
    std::uint16_t port;
    bool bracketed;
    const char* host_text;
  };
  for (const auto& c : {Case{"127.0.0.1:9464", "127.0.0.1", 9464, false, "127.0.0.1"},
                        Case{"localhost:0", "localhost", 0, false, "localhost"},
                        Case{"0.0.0.0:65535", "0.0.0.0", 65535, false, "0.0.0.0"},
                        Case{"[::1]:9464", "::1", 9464, true, "[::1]"},
                        Case{"[fe80::1:2]:80", "fe80::1:2", 80, true, "[fe80::1:2]"}}) {
    const auto a = Parsed(c.text);
    EXPECT_EQ(a.host, c.host) << c.text;
    EXPECT_EQ(a.port, c.port) << c.text;
    EXPECT_EQ(a.bracketed, c.bracketed) << c.text;
    EXPECT_EQ(a.HostText(), c.host_text) << c.text;
    EXPECT_EQ(HostTextOf(c.text), c.host_text) << c.text;
  }
  EXPECT_EQ(HostTextOf("no-port"), "no-port");
}

TEST(HostPort, AWildcardAddressIsDialedAtItsLoopback) {
  const auto dial = [](const char* text) { return Parsed(text).DialHost(); };
  EXPECT_EQ(dial("0.0.0.0:9464"), "127.0.0.1");
  EXPECT_EQ(dial("[::]:9464"), "::1");
  EXPECT_EQ(dial("[::1]:9464"), "::1");
  EXPECT_EQ(dial("10.0.0.5:9464"), "10.0.0.5");
  EXPECT_EQ(dial("node-a:9464"), "node-a");
}

TEST(HostPort, RefusalsSayWhatIsWrong) {
  const std::pair<const char*, const char*> refused[] = {
      {"9464", "no port"},
      {"", "no port"},
      {"[::1]", "no port"},
      {":9464", "empty host"},
      {"[]:9464", "empty host"},
      {"[::1:80", "unterminated IPv6 address"},
      {"[::1]80", "expected ':PORT' after the IPv6 address"},
      {"::1:80", "an IPv6 address must be in brackets, e.g. [::1]:9464"},
  };
  for (const auto& [text, why] : refused) EXPECT_EQ(Refused(text), why) << text;
  for (const char* bad : {"127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:94x",
                          "127.0.0.1: 80", "[::1]:", "[::1]:99999"}) {
    EXPECT_EQ(Refused(bad), "the port is not a number from 0 to 65535") << bad;
  }
}

TEST(HostPort, AddressForms) {
  EXPECT_TRUE(IsIpv4Address("127.0.0.1"));
  EXPECT_TRUE(IsIpv4Address("255.255.255.255"));
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "a.b.c.d", "1..2.3", "1.2.3.4 "}) {
    EXPECT_FALSE(IsIpv4Address(bad)) << bad;
  }
  EXPECT_TRUE(LooksLikeIpv6Address("::1"));
  EXPECT_TRUE(LooksLikeIpv6Address("::ffff:127.0.0.1"));
  EXPECT_FALSE(LooksLikeIpv6Address(""));
  EXPECT_FALSE(LooksLikeIpv6Address("localhost"));
  EXPECT_FALSE(LooksLikeIpv6Address("1.2.3.4"));
}

}  // namespace
}  // namespace dxshim
