#include "shim/gpu/ledger_feed.h"

#include <spdlog/spdlog.h>

#include <cstdint>
#include <memory>

#include "shim/base/comma_list.h"

namespace dxshim {

RuntimeRecordPoller::Consumer FeedLedger(Ledger& ledger, SandboxHandlers* handlers,
                                         std::string name) {
  // The handlers' mark taken before a listing, for the Reconcile after it (one listing at a time).
  auto mark = std::make_shared<std::uint64_t>(0);
  RuntimeRecordPoller::Consumer consumer;
  consumer.starting = [&ledger, handlers, mark] {
    ledger.BeginResync();
    if (handlers) *mark = handlers->Mark();
  };
  consumer.listed = [&ledger, handlers, mark,
                     name = std::move(name)](const RuntimeRecordPoller::Listing& listing) {
    const auto outcome = ledger.FinishResync(listing.record);
    if (handlers) handlers->Reconcile(listing.sandbox_handlers, *mark);
    for (const auto& freed : outcome.freed) {
      spdlog::info("{}: sandbox {} is stopped or gone: GPU(s) {} free", name, freed.sandbox_id,
                   JoinCommaList(freed.device_ids));
    }
    return outcome.holding;
  };
  return consumer;
}

}  // namespace dxshim
