// CRI endpoints as operators write them: `unix:///path`, a bare absolute path, or
// `tcp://host:port`; in the Windows build `npipe://./pipe/<name>` instead of unix sockets.
#pragma once

#include <string>
#include <string_view>

namespace dxshim {

struct Endpoint {
  enum class Kind { kUnix, kTcp, kPipe };
  Kind kind = Kind::kUnix;
  std::string address;  // kUnix: absolute socket path; kTcp: host:port; kPipe: \\.\pipe\name

  // The address in gRPC's target syntax ("unix:/path", "host:port"). gRPC has no pipe transport:
  // a kPipe endpoint must be bridged to loopback TCP first (std::logic_error otherwise).
  std::string GrpcTarget() const;
  // The address as an operator writes it ("unix:///path", "tcp://host:port", "npipe://./pipe/x").
  std::string ToString() const;
};

// Throws std::invalid_argument naming the text and what is wrong with it.
Endpoint ParseEndpoint(std::string_view text);

}  // namespace dxshim
