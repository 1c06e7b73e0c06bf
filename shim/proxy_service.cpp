#include "shim/proxy_service.h"

#include "shim/cri_methods.h"
#include "shim/stream_call.h"
#include "shim/unary_call.h"

namespace dxshim {

grpc::ServerGenericBidiReactor* ProxyService::CreateReactor(
    grpc::GenericCallbackServerContext* ctx) {
  const auto method = ctx->method();
  if (!IsUnaryCriMethod(method)) return new StreamCall(ctx, shared_);
  const bool intercept = shared_.interceptor != nullptr && method == kCreateContainerMethod;
  return new UnaryCall(ctx, shared_, intercept);
}

}  // namespace dxshim
