#include "shim/proxy/metadata.h"

#include <array>

namespace dxshim {

bool IsTransportHeader(std::string_view key) {
  static constexpr std::array<std::string_view, 5> kExact = {"content-type", "te", "user-agent",
                                                             "host", "content-length"};
  if (key.empty() || key.front() == ':' || key.starts_with("grpc-")) return true;
  for (auto exact : kExact) {
    if (key == exact) return true;
  }
  return false;
}

void CopyCallerMetadata(const MetadataMap& from, grpc::ClientContext& to) {
  for (const auto& [key, value] : from) {
    const std::string_view k(key.data(), key.size());
    if (!IsTransportHeader(k))
      to.AddMetadata(std::string(k), std::string(value.data(), value.size()));
  }
}

}  // namespace dxshim
