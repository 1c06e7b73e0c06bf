// Which metadata of a caller goes upstream (shim/proxy/metadata.h): transport headers never do,
// everything else does.
#include "shim/proxy/metadata.h"

#include <gtest/gtest.h>

namespace dxshim {
namespace {

TEST(Metadata, TransportHeadersAreNotCopied) {
  for (const char* key : {":authority", "content-type", "te", "user-agent", "grpc-timeout",
                          "grpc-encoding", "grpc-status", "host"}) {
    EXPECT_TRUE(IsTransportHeader(key)) << key;
  }
  for (const char* key : {"containerd-namespace", "x-request-id", "trace-bin", "authorization"}) {
    EXPECT_FALSE(IsTransportHeader(key)) << key;
  }
}

}  // namespace
}  // namespace dxshim
