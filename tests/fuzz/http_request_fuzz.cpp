// libFuzzer target: the metrics endpoint's HTTP/1 request head reader (shim/admin/
// http_request.h), the only parser any local user reaches. The input is the bytes a client
// sends. Properties:
// - feeding the bytes whole, one byte at a time, or in chunks whose sizes come from the input
//   gives the same state, method, path and problem (the reader is incremental: a slow client's
//   split must not change the answer);
// - a complete head is what an independent reading of the input finds: optional empty lines, a
//   request line "METHOD SP /TARGET SP HTTP/1.x" with a token method and a printable target,
//   header lines "token:...", an empty line ending within kMaxHeadBytes; method() and path() are
//   exactly the request line's method and its target before '?';
// - a refusal names what was wrong (a non-empty, printable problem); kTooLarge only for an input
//   whose head does not end within kMaxHeadBytes;
// - once complete or refused, further bytes change nothing.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shim/admin/http_request.h"

namespace {

using dxshim::admin::HttpRequestReader;
using State = HttpRequestReader::State;

struct Result {
  State state;
  std::string method, path, problem;
  bool operator==(const Result&) const = default;
};

Result Of(const HttpRequestReader& reader) {
  return {reader.state(), reader.method(), reader.path(), reader.problem()};
}

bool IsTokenChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool AllToken(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

bool Printable(std::string_view text) {
  for (const char c : text) {
    if (c < ' ' || c > '~') return false;
  }
  return true;
}

// The head as the grammar reads it, if the input holds a complete one: its method and path.
struct Head {
  bool complete = false;
  std::size_t end = 0;  // index of the '\n' that ends it
  bool malformed = false;
  std::size_t bad_end = 0;  // index of the '\n' that ends the first line that is not HTTP
  std::string method, path;
};

Head ReadIndependently(std::string_view input) {
  Head head;
  const auto bad = [&head](std::size_t nl) {
    head.malformed = true;
    head.bad_end = nl;
    return head;
  };
  bool request_line = false;
  std::size_t from = 0;
  for (auto nl = input.find('\n'); nl != std::string_view::npos; nl = input.find('\n', from)) {
    auto line = input.substr(from, nl - from);
    from = nl + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (!request_line) {
      if (line.empty()) continue;
      const auto a = line.find(' ');
      if (a == std::string_view::npos) return bad(nl);
      const auto b = line.find(' ', a + 1);
      if (b == std::string_view::npos) return bad(nl);
      const auto method = line.substr(0, a);
      const auto target = line.substr(a + 1, b - a - 1);
      const auto version = line.substr(b + 1);
      if (!AllToken(method) || target.empty() || target[0] != '/' || !Printable(target) ||
          target.find(' ') != std::string_view::npos ||
          (version != "HTTP/1.1" && version != "HTTP/1.0")) {
        return bad(nl);
      }
      head.method = method;
      head.path = target.substr(0, target.find('?'));
      request_line = true;
      continue;
    }
    if (line.empty()) {
      head.complete = true;
      head.end = nl;
      return head;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !AllToken(line.substr(0, colon))) return bad(nl);
  }
  return head;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  HttpRequestReader whole;
  whole.Feed(input);
  const auto result = Of(whole);

  HttpRequestReader bytewise;
  for (std::size_t i = 0; i < size; ++i) bytewise.Feed(input.substr(i, 1));
  if (!(Of(bytewise) == result)) std::abort();

  // Chunks of 1 to 64 bytes, their sizes taken from the input itself.
  HttpRequestReader chunked;
  for (std::size_t i = 0, n = 0; i < size; i += n) {
    n = 1 + data[i] % 64;
    chunked.Feed(input.substr(i, n));
  }
  if (!(Of(chunked) == result)) std::abort();

  const auto head = ReadIndependently(input);
  constexpr auto kMax = HttpRequestReader::kMaxHeadBytes;
  const bool complete = head.complete && head.end < kMax;
  const bool malformed = head.malformed && head.bad_end < kMax;
  switch (result.state) {
    case State::kComplete:
      if (!complete) std::abort();
      if (result.method != head.method || result.path != head.path) std::abort();
      if (!result.problem.empty()) std::abort();
      break;
    case State::kMalformed:
    case State::kTooLarge:
      if (result.problem.empty() || !Printable(result.problem) || complete) std::abort();
      if (result.state == State::kMalformed && !malformed) std::abort();
      if (result.state == State::kTooLarge && (malformed || size <= kMax)) std::abort();
      break;
    case State::kIncomplete:
      if (complete || malformed || size > kMax) std::abort();
      break;
  }
  // A decided reader stays decided.
  if (result.state != State::kIncomplete) {
    whole.Feed("GET / HTTP/1.1\r\n\r\n");
    if (!(Of(whole) == result)) std::abort();
  }
  return 0;
}
