// Conversions between gRPC byte buffers and contiguous bytes, for the few places that must look
// inside a message (interception). Relaying never converts.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <string>
#include <string_view>

namespace dxshim {

std::string ToBytes(const grpc::ByteBuffer& buffer);
grpc::ByteBuffer FromBytes(std::string_view bytes);

}  // namespace dxshim
