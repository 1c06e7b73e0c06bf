// What `serve` does with each listing of the runtime (shim/runtime_record/runtime_record_poller.h):
// the ledger is rebuilt from the runtime record (holds the runtime no longer backs are freed, and
// logged), and, when given, the sandbox handlers learn which runtime handler runs each sandbox.
#pragma once

#include <string>

#include "shim/gpu/sandbox_handlers.h"
#include "shim/ledger/ledger.h"
#include "shim/runtime_record/runtime_record_poller.h"

namespace dxshim {

// `handlers` may be null. `name` starts the log lines.
RuntimeRecordPoller::Consumer FeedLedger(Ledger& ledger, SandboxHandlers* handlers,
                                         std::string name = "ledger");

}  // namespace dxshim
