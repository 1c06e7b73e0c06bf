#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <mutex>

#include "shim/stop_request.h"

namespace dxshim {
namespace {

std::mutex requested_mutex;
std::string requested;  // set by Request(): the reason Wait() reports instead of the signal

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
  kill(getpid(), SIGTERM);  // blocked everywhere, so it reaches Wait()'s sigwait
}

}  // namespace dxshim
