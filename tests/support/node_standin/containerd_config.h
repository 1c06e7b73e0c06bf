// The gRPC address of a containerd config.toml.
#pragma once

#include <optional>
#include <string>

namespace dxshim::test::node_standin {

// The `address` of the top-level [grpc] table of a containerd config.toml (a basic "..." string
// with its escapes, or a literal '...' one), if it has one.
std::optional<std::string> GrpcAddress(const std::string& toml);

}  // namespace dxshim::test::node_standin
