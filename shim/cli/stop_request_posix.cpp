#include <pthread.h>
#include <signal.h>

#include <mutex>

#include "shim/cli/stop_request.h"

namespace dxshim {
namespace {

std::mutex requested_mutex;
std::string requested;  // set by Request(): the reason Wait() reports instead of the signal
pthread_t waiter;       // the thread that constructed the StopRequest (and waits)

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

StopRequest::StopRequest() {
  const auto set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  waiter = pthread_self();
}

StopRequest::~StopRequest() {
  std::lock_guard lock(requested_mutex);
  requested.clear();
}

std::string StopRequest::Wait() {
  const auto set = StopSignals();
  int number = 0;
  sigwait(&set, &number);
  std::lock_guard lock(requested_mutex);
  if (!requested.empty()) return requested;
  return number == SIGTERM ? "SIGTERM" : "SIGINT";
}

void StopRequest::Request(const std::string& reason) {
  {
    std::lock_guard lock(requested_mutex);
    requested = reason;
  }
  // Directed at the waiting thread, which blocks it: it stays pending there for sigwait, and no
  // thread that does not block it (one started before the StopRequest) can be killed by it.
  // NOLINTNEXTLINE(bugprone-bad-signal-to-kill-thread): blocked there, taken by sigwait
  pthread_kill(waiter, SIGTERM);
}

}  // namespace dxshim
