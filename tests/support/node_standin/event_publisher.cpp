// A shim's event publisher: containerd's retry schedule over a TTRPC Forward call.
#include "tests/support/node_standin/event_publisher.h"

#include <windows.h>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/pipe_stream.h"
#include "tests/support/node_standin/service_runner.h"
#include "tests/support/node_standin/ttrpc.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Widen;

namespace {

constexpr int kMaxRequeue = 5;             // publisher.go maxRequeue
constexpr DWORD kDialTimeoutMs = 5000;     // ttrpcutil ttrpcDialTimeout
constexpr DWORD kForwardTimeoutMs = 5000;  // publisher.go forwardRequest's context

// One attempt: empty when delivered, else why not.
std::string ForwardOnce(const std::string& address, const EventEnvelope& envelope) {
  DWORD error = 0;
  const HANDLE pipe = DialPipe(Widen(address), kDialTimeoutMs, true, error);
  if (pipe == INVALID_HANDLE_VALUE) {
    // pkg/dialer: a pipe still missing at the deadline is "dial ADDRESS: timeout".
    return error == ERROR_FILE_NOT_FOUND ? "dial " + address + ": timeout"
                                         : "dial " + address + ": error " + std::to_string(error);
  }
  PipeStream stream(pipe, kForwardTimeoutMs);
  TtrpcClient client(stream);
  TtrpcStatus status;
  std::string response;
  std::string why;
  // namespaces.WithNamespace puts the namespace in the TTRPC metadata too (namespaces/ttrpc.go).
  if (!client.Call({kEventsService,
                    "Forward",
                    EncodeForwardRequest(envelope),
                    static_cast<std::int64_t>(kForwardTimeoutMs) * 1000000,
                    {{kNamespaceTtrpcHeader, envelope.ns}}},
                   status, response, why)) {
    return "forward: " + why;
  }
  if (status.code != 0)
    return "forward: status " + std::to_string(status.code) + ": " + status.message;
  return "";
}

}  // namespace

bool PublishEvent(const std::string& address, const EventEnvelope& envelope,
                  const std::string& container, const std::wstring& log) {
  const std::string what = envelope.topic + " " + container;
  for (int attempt = 1;; ++attempt) {
    const std::string failure = ForwardOnce(address, envelope);
    AppendLine(log, "publish " + what + " attempt " + std::to_string(attempt) + " to " + address +
                        (failure.empty() ? ": ok" : ": failed: " + failure));
    if (failure.empty()) return true;
    // publisher.go queue(): the item's count goes up, then it waits count seconds; processQueue
    // evicts it once the count is over maxRequeue.
    const int count = attempt;
    if (WaitForSingleObject(g_stop, static_cast<DWORD>(count) * 1000) == WAIT_OBJECT_0)
      return false;
    if (count > kMaxRequeue) {
      AppendLine(log, "evict " + what + " after " + std::to_string(attempt) + " attempts");
      return false;
    }
  }
}

}  // namespace dxshim::test::node_standin
