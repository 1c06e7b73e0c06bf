// HOST:PORT (base/host_port.h): IPv4, names and bracketed IPv6 hosts with a port from 0 to 65535;
// each malformed form is refused with the reason a caller puts in its message.
#include "base/host_port.h"

#include <gtest/gtest.h>

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

TEST(HostPort, Ipv4AndNames) {
  const auto a = Parsed("127.0.0.1:9464");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9464);
  EXPECT_FALSE(a.bracketed);
  EXPECT_EQ(a.HostText(), "127.0.0.1");
  EXPECT_EQ(Parsed("localhost:0").port, 0);
  EXPECT_EQ(Parsed("0.0.0.0:65535").port, 65535);
}

TEST(HostPort, Ipv6InBrackets) {
  const auto a = Parsed("[::1]:9464");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 9464);
  EXPECT_TRUE(a.bracketed);
  EXPECT_EQ(a.HostText(), "[::1]");
  EXPECT_EQ(Parsed("[fe80::1:2]:80").host, "fe80::1:2");
  EXPECT_EQ(HostTextOf("[::]:0"), "[::]");
  EXPECT_EQ(HostTextOf("10.0.0.1:80"), "10.0.0.1");
  EXPECT_EQ(HostTextOf("no-port"), "no-port");
}

TEST(HostPort, RefusalsSayWhatIsWrong) {
  EXPECT_EQ(Refused("9464"), "no port");
  EXPECT_EQ(Refused(""), "no port");
  EXPECT_EQ(Refused("[::1]"), "no port");
  EXPECT_EQ(Refused(":9464"), "empty host");
  EXPECT_EQ(Refused("[]:9464"), "empty host");
  EXPECT_EQ(Refused("[::1:80"), "unterminated IPv6 address");
  EXPECT_NE(Refused("[::1]80").find("':PORT'"), std::string::npos);
  EXPECT_NE(Refused("::1:80").find("in brackets"), std::string::npos);
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
