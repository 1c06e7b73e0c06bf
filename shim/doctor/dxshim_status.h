// What dxshim says of itself on the CRI endpoint it serves (its NodeStatus methods,
// cri-api/dxshim/v1/node_status.proto), and whether a CRI call through an endpoint is answered:
// the gRPC half of the installer's proof (shim/install/system/dxshim_probe.h) and of doctor.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "shim/install/system/dxshim_probe.h"
#include "shim/proxy/endpoint.h"

namespace dxshim::doctor {

// dxshim's record of who made CRI calls through it, asked at `dial` (what gRPC dials: on Windows
// the loopback bridge to dxshim's pipe); nullopt with `error` when nothing answers it there.
std::optional<install::CriCallers> AskCriCallers(const Endpoint& dial,
                                                 std::chrono::milliseconds timeout,
                                                 std::string& error);

// Whether a CRI Version call at `dial` is answered OK within `timeout`.
bool CriVersionAnswers(const Endpoint& dial, std::chrono::milliseconds timeout);

}  // namespace dxshim::doctor
