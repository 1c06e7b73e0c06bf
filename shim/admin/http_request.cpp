#include "shim/admin/http_request.h"

#include <algorithm>

namespace dxshim::admin {
namespace {

// RFC 9110's token characters (methods and header names).
bool IsToken(std::string_view text) {
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           kSymbols.find(c) != std::string_view::npos;
  });
}

// Printable ASCII without spaces: what a request target may hold.
bool IsTarget(std::string_view text) {
  return !text.empty() && text.front() == '/' &&
         std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

std::string Shown(std::string_view line) {
  constexpr std::size_t kShown = 60;
  std::string shown;
  for (const char c : line.substr(0, kShown)) {
    shown += (c >= ' ' && c < 0x7f) ? c : '?';
  }
  return line.size() > kShown ? shown + "..." : shown;
}

}  // namespace

HttpRequestReader::State HttpRequestReader::Refuse(State state, std::string problem) {
  state_ = state;
  problem_ = std::move(problem);
  buffer_.clear();
  return state_;
}

bool HttpRequestReader::ParseRequestLine(std::string_view line) {
  const auto first = line.find(' ');
  const auto second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    Refuse(State::kMalformed, "not an HTTP request line: \"" + Shown(line) + "\"");
    return false;
  }
  const auto method = line.substr(0, first);
  const auto target = line.substr(first + 1, second - first - 1);
  const auto version = line.substr(second + 1);
  if (!IsToken(method)) {
    Refuse(State::kMalformed, "not an HTTP method: \"" + Shown(method) + "\"");
    return false;
  }
  if (!IsTarget(target)) {
    Refuse(State::kMalformed, "not a path: \"" + Shown(target) + "\"");
    return false;
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    Refuse(State::kMalformed, "not HTTP/1.0 or HTTP/1.1: \"" + Shown(version) + "\"");
    return false;
  }
  method_ = method;
  path_ = target.substr(0, target.find('?'));
  return true;
}

bool HttpRequestReader::CheckHeaderLine(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
    Refuse(State::kMalformed, "not a header line: \"" + Shown(line) + "\"");
    return false;
  }
  return true;
}

HttpRequestReader::State HttpRequestReader::Feed(std::string_view bytes) {
  if (state_ != State::kIncomplete) return state_;
  buffer_.append(bytes);
  // Lines end in CRLF (a bare LF is taken too); the head ends at the first empty line.
  for (auto end = buffer_.find('\n', scanned_); end != std::string::npos;
       end = buffer_.find('\n', scanned_)) {
    if (end >= kMaxHeadBytes) break;  // refused below, whatever the line holds
    std::string_view line(buffer_.data() + scanned_, end - scanned_);
    scanned_ = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!request_line_read_) {
      if (line.empty()) continue;  // RFC 9112: empty lines before the request line are ignored
      if (!ParseRequestLine(line)) return state_;
      request_line_read_ = true;
      continue;
    }
    if (line.empty()) {
      state_ = State::kComplete;
      buffer_.clear();
      return state_;
    }
    if (!CheckHeaderLine(line)) return state_;
  }
  if (buffer_.size() > kMaxHeadBytes) {  // the head is not complete within the limit
    return Refuse(State::kTooLarge,
                  "the request head is over " + std::to_string(kMaxHeadBytes) + " bytes");
  }
  return state_;
}

}  // namespace dxshim::admin
