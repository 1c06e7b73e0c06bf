// Which gRPC metadata a transparent proxy copies from one leg to the other.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/string_ref.h>

#include <map>
#include <string_view>

namespace dxshim {

// Headers owned by the HTTP/2 and gRPC transport of each leg (pseudo-headers, content-type, te,
// user-agent, grpc-*): every leg writes its own, so they are never copied.
bool IsTransportHeader(std::string_view key);

using MetadataMap = std::multimap<grpc::string_ref, grpc::string_ref>;

// The caller's metadata onto the upstream call.
void CopyCallerMetadata(const MetadataMap& from, grpc::ClientContext& to);

// Runtime metadata (initial or trailing) onto the caller's call; `add` is
// ServerContext::AddInitialMetadata or AddTrailingMetadata.
template <typename AddFn>
void CopyRuntimeMetadata(const MetadataMap& from, AddFn&& add) {
  for (const auto& [key, value] : from) {
    const std::string_view k(key.data(), key.size());
    if (!IsTransportHeader(k)) add(std::string(k), std::string(value.data(), value.size()));
  }
}

}  // namespace dxshim
