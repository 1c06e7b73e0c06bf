// The head of one HTTP/1.x request, read as its bytes arrive on a connection of the operator's
// endpoint: the request line and the header lines up to the empty line. Only what the endpoint
// acts on is kept (method and path); a head larger than kMaxHeadBytes, or one that is not HTTP,
// is refused with what was wrong.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dxshim::admin {

class HttpRequestReader {
 public:
  static constexpr std::size_t kMaxHeadBytes = 8192;
  enum class State { kIncomplete, kComplete, kTooLarge, kMalformed };

  // Takes the next bytes of the connection; returns the state after them. Once the head is
  // complete or refused, further bytes are ignored.
  State Feed(std::string_view bytes);

  State state() const { return state_; }
  bool started() const { return !buffer_.empty() || state_ != State::kIncomplete; }
  const std::string& method() const { return method_; }
  // The target's path: what precedes '?' (the query is not used by any of the paths served).
  const std::string& path() const { return path_; }
  // For kTooLarge and kMalformed: what was wrong, for the answer and the log.
  const std::string& problem() const { return problem_; }

 private:
  State Refuse(State state, std::string problem);
  bool ParseRequestLine(std::string_view line);
  bool CheckHeaderLine(std::string_view line);

  std::string buffer_;
  std::size_t scanned_ = 0;  // bytes of buffer_ already split into lines
  bool request_line_read_ = false;
  State state_ = State::kIncomplete;
  std::string method_;
  std::string path_;
  std::string problem_;
};

}  // namespace dxshim::admin
