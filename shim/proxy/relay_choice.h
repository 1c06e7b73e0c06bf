// Which relay carries an accepted call (ProxyShared::relay_for): a refusal for a peer the endpoint
// does not admit, dxshim's own answer for a method it answers itself (local_method.h), a
// UnaryRelay for the known unary CRI methods (intercepted when the interceptor wants the method),
// a StreamRelay for anything else.
#pragma once

#include <memory>

#include "shim/proxy/proxied_call.h"

namespace dxshim {

std::unique_ptr<Relay> RelayFor(ProxiedCall& call, bool admitted);

}  // namespace dxshim
