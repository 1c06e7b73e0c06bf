// gRPC status code names (shim/proxy/status_code_name.h): every code gRPC defines has its
// canonical name, and a value outside them is named UNKNOWN, as gRPC itself treats it.
#include "shim/proxy/status_code_name.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace dxshim {
namespace {

TEST(StatusCodeName, EveryCodeHasItsCanonicalName) {
  const std::pair<grpc::StatusCode, std::string> expected[] = {
      {grpc::StatusCode::OK, "OK"},
      {grpc::StatusCode::CANCELLED, "CANCELLED"},
      {grpc::StatusCode::UNKNOWN, "UNKNOWN"},
      {grpc::StatusCode::INVALID_ARGUMENT, "INVALID_ARGUMENT"},
      {grpc::StatusCode::DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"},
      {grpc::StatusCode::NOT_FOUND, "NOT_FOUND"},
      {grpc::StatusCode::ALREADY_EXISTS, "ALREADY_EXISTS"},
      {grpc::StatusCode::PERMISSION_DENIED, "PERMISSION_DENIED"},
      {grpc::StatusCode::RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED"},
      {grpc::StatusCode::FAILED_PRECONDITION, "FAILED_PRECONDITION"},
      {grpc::StatusCode::ABORTED, "ABORTED"},
      {grpc::StatusCode::OUT_OF_RANGE, "OUT_OF_RANGE"},
      {grpc::StatusCode::UNIMPLEMENTED, "UNIMPLEMENTED"},
      {grpc::StatusCode::INTERNAL, "INTERNAL"},
      {grpc::StatusCode::UNAVAILABLE, "UNAVAILABLE"},
      {grpc::StatusCode::DATA_LOSS, "DATA_LOSS"},
      {grpc::StatusCode::UNAUTHENTICATED, "UNAUTHENTICATED"},
  };
  for (const auto& [code, name] : expected) {
    EXPECT_EQ(StatusCodeName(code), name) << "code " << static_cast<int>(code);
  }
}

TEST(StatusCodeName, AValueOutsideTheCodesIsUnknown) {
  EXPECT_EQ(std::string(StatusCodeName(static_cast<grpc::StatusCode>(17))), "UNKNOWN");
  EXPECT_EQ(std::string(StatusCodeName(grpc::StatusCode::DO_NOT_USE)), "UNKNOWN");
}

}  // namespace
}  // namespace dxshim
