// Methods dxshim answers itself on its CRI endpoint, never relayed to the runtime: each a unary
// method whose answer (the serialized response message) a function gives; the request is read
// and not looked at. dxshim's own NodeStatus (cri-api/dxshim/v1/node_status.proto) is the one
// there is. A caller the endpoint does not admit is refused before any of them is chosen.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "shim/proxy/proxied_call.h"

namespace dxshim {

// LocalMethods (proxied_call.h): full method name ("/dxshim.v1.NodeStatus/CriCallers") -> the
// serialized answer.
std::unique_ptr<Relay> LocalRelay(ProxiedCall& call, const std::function<std::string()>& answer);

}  // namespace dxshim
