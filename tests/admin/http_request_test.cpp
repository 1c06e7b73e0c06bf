// The metrics endpoint's request reader (shim/admin/http_request.h): a request head taken in
// any split, the path without its query, and what is refused (not HTTP, too large) with the reason.
#include "shim/admin/http_request.h"

#include <gtest/gtest.h>

namespace dxshim::admin {
namespace {

using State = HttpRequestReader::State;

TEST(HttpRequestReader, ReadsAHeadInAnySplit) {
  const std::string request =
      "GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nAccept: */*\r\n\r\n";
  for (std::size_t cut = 0; cut <= request.size(); ++cut) {
    HttpRequestReader reader;
    const auto first = reader.Feed(request.substr(0, cut));
    EXPECT_EQ(first, cut == request.size() ? State::kComplete : State::kIncomplete) << cut;
    EXPECT_EQ(reader.Feed(request.substr(cut)), State::kComplete) << cut;
    EXPECT_EQ(reader.method(), "GET");
    EXPECT_EQ(reader.path(), "/metrics");
  }
}

TEST(HttpRequestReader, TakesBareLineFeedsAndLeadingEmptyLines) {
  HttpRequestReader reader;
  EXPECT_EQ(reader.Feed("\r\nHEAD /healthz HTTP/1.0\nHost: x\n\n"), State::kComplete);
  EXPECT_EQ(reader.method(), "HEAD");
  EXPECT_EQ(reader.path(), "/healthz");
}

TEST(HttpRequestReader, NothingYetIsNotStarted) {
  HttpRequestReader reader;
  EXPECT_FALSE(reader.started());
  EXPECT_EQ(reader.Feed("GET /met"), State::kIncomplete);
  EXPECT_TRUE(reader.started());
}

TEST(HttpRequestReader, RefusesWhatIsNotHttpAndSaysWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"GET /metrics\r\n\r\n", "not an HTTP request line: \"GET /metrics\""},
      {"GET /metrics HTTP/2.0\r\n\r\n", "not HTTP/1.0 or HTTP/1.1: \"HTTP/2.0\""},
      {"GET metrics HTTP/1.1\r\n\r\n", "not a path: \"metrics\""},
      {"G(T / HTTP/1.1\r\n\r\n", "not an HTTP method: \"G(T\""},
      {"GET  / HTTP/1.1\r\n\r\n", "not an HTTP request line: \"GET  / HTTP/1.1\""},
      {"GET / HTTP/1.1\r\nno colon here\r\n\r\n", "not a header line: \"no colon here\""},
      {"GET / HTTP/1.1\r\n folded: x\r\n\r\n", "not a header line: \" folded: x\""},
      {"\x16\x03\x01\x02\x01\x01\xfc\x03\x03\n",  // a TLS handshake's first bytes
       "not an HTTP request line: \"?????????\""},
  };
  for (const auto& [request, problem] : cases) {
    HttpRequestReader reader;
    EXPECT_EQ(reader.Feed(request), State::kMalformed) << request;
    EXPECT_EQ(reader.problem(), problem) << request;
    EXPECT_EQ(reader.Feed("GET / HTTP/1.1\r\n\r\n"), State::kMalformed) << "it stays refused";
  }
}

TEST(HttpRequestReader, RefusesAHeadOverItsLimit) {
  HttpRequestReader reader;
  EXPECT_EQ(reader.Feed("GET / HTTP/1.1\r\n"), State::kIncomplete);
  const std::string header = "X-Filler: " + std::string(100, 'a') + "\r\n";
  State state = State::kIncomplete;
  std::size_t sent = 0;
  while (state == State::kIncomplete && sent < 2 * HttpRequestReader::kMaxHeadBytes) {
    state = reader.Feed(header);
    sent += header.size();
  }
  EXPECT_EQ(state, State::kTooLarge);
  EXPECT_GT(sent, HttpRequestReader::kMaxHeadBytes - 200);
  EXPECT_EQ(reader.problem(), "the request head is over 8192 bytes");

  HttpRequestReader endless;  // one line that never ends
  EXPECT_EQ(endless.Feed(std::string(HttpRequestReader::kMaxHeadBytes + 1, 'G')), State::kTooLarge);
}

}  // namespace
}  // namespace dxshim::admin
