// serve's answer to dxshim's own NodeStatus methods (cri-api/dxshim/v1/node_status.proto), which
// the relay answers itself (shim/proxy/local_method.h): who made CRI calls through its endpoint.
#pragma once

#include "shim/proxy/cri_callers.h"
#include "shim/proxy/local_method.h"

namespace dxshim {

inline constexpr char kCriCallersMethod[] = "/dxshim.v1.NodeStatus/CriCallers";

// The methods to add to ProxyOptions::local_methods; `callers` must outlive the server.
LocalMethods NodeStatusMethods(const CriCallers& callers);

}  // namespace dxshim
