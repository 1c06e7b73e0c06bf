#include "shim/socket_bridge/socket_forwarder.h"

namespace dxshim::socket_bridge {
namespace {

constexpr std::chrono::milliseconds kStopCheck{200};

}  // namespace

SocketForwarder::SocketForwarder(Socket listener, std::string name, Dial dial, Admission admit,
                                 Log warn)
    : listener_(std::move(listener)),
      name_(std::move(name)),
      dial_(std::move(dial)),
      admit_(std::move(admit)),
      warn_(std::move(warn)) {
  SetNonBlocking(listener_.get());
  thread_ = std::thread([this] { AcceptLoop(); });
}

SocketForwarder::~SocketForwarder() { Stop(); }

void SocketForwarder::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  listener_.reset();
  std::list<std::unique_ptr<StreamBridge>> bridges;
  {
    std::lock_guard lock(mutex_);
    bridges.swap(bridges_);
  }
  for (auto& bridge : bridges) bridge->Stop();  // all asked first, then joined
  bridges.clear();
}

void SocketForwarder::AcceptLoop() {
  while (!stopping_) {
    PollEntry entry{listener_.get(), true, false};
    if (!Poll(std::span(&entry, 1), kStopCheck)) {
      if (warn_) warn_(name_ + ": waiting for connections failed: " + LastSocketError());
      return;
    }
    if (!entry.readable) continue;
    for (;;) {
      auto client = Accept(listener_.get());
      if (!client.valid()) break;  // none left (or the peer gave up before the accept)
      std::string error;
      std::string served_as;
      auto backend = dial_(error, served_as);
      if (!backend.valid()) {
        ++failed_dials_;
        if (warn_ && error != last_dial_error_) warn_(name_ + ": " + error);
        last_dial_error_ = error;
        continue;  // closes the client's connection: it sees it end, and retries
      }
      last_dial_error_.clear();
      auto listed = backend_connections_.Add(std::move(served_as));
      auto bridge = std::make_unique<StreamBridge>(std::move(client), std::move(backend), admit_,
                                                   std::move(listed));
      std::lock_guard lock(mutex_);
      ReapLocked();
      bridges_.push_back(std::move(bridge));
      bridges_.back()->Start();
    }
  }
}

void SocketForwarder::ReapLocked() {
  bridges_.remove_if([](const std::unique_ptr<StreamBridge>& b) { return b->finished(); });
}

std::size_t SocketForwarder::active_connections() {
  std::lock_guard lock(mutex_);
  ReapLocked();
  return bridges_.size();
}

}  // namespace dxshim::socket_bridge
