// Forwarding an event to containerd over TTRPC as a shim's publisher does (containerd v1.6.36
// and v1.7.20 runtime/v2/shim/publisher.go, vendored unchanged by hcsshim v0.11.8;
// pkg/ttrpcutil/client.go; pkg/dialer): the first attempt at once, then up to 5 more, attempt N+1
// N seconds after attempt N failed, then the event dropped ("evicting ... because of retry
// count", 6 seconds after the sixth failure). Each attempt dials ADDRESS (a pipe that does not
// exist is retried every 10 ms for up to 5 s: ttrpcDialTimeout), and calls
// containerd.services.events.ttrpc.v1.Events/Forward with a 5 s timeout.
#pragma once

#include <string>

#include "tests/support/node_standin/containerd_messages.h"

namespace dxshim::test::node_standin {

// Publishes ENVELOPE to ADDRESS (TTRPC_ADDRESS as the shim read it), appending one line per
// attempt to LOG: `publish TOPIC CONTAINER attempt N to ADDRESS: ok` or `: failed: WHY`, and
// `evict TOPIC CONTAINER after 6 attempts` when it gives up. True once delivered. g_stop ends
// the retries.
bool PublishEvent(const std::string& address, const EventEnvelope& envelope,
                  const std::string& container, const std::wstring& log);

}  // namespace dxshim::test::node_standin
