// CRI endpoints as operators write them: `unix:///path`, a bare absolute path, or
// `tcp://host:port`. Named pipes (`npipe://`) belong to the Windows build.
#pragma once

#include <string>
#include <string_view>

namespace dxshim {

struct Endpoint {
  enum class Kind { kUnix, kTcp };
  Kind kind = Kind::kUnix;
  std::string address;  // kUnix: absolute socket path; kTcp: host:port

  // The address in gRPC's target syntax ("unix:/path", "host:port").
  std::string GrpcTarget() const;
  // The address as an operator writes it ("unix:///path", "tcp://host:port").
  std::string ToString() const;
};

// Throws std::invalid_argument naming the text and what is wrong with it.
Endpoint ParseEndpoint(std::string_view text);

}  // namespace dxshim
