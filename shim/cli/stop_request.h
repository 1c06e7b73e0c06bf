// How `dxshim serve` learns that it must stop. Linux: SIGTERM or SIGINT. Windows: Ctrl-C,
// Ctrl-Break, the console closing, logoff or shutdown when run in a console, or the service
// control manager's stop (through Request). No gRPC here, so the Windows half is cross-compiled
// and tested under wine.
#pragma once

#include <string>

namespace dxshim {

class StopRequest {
 public:
  // Takes over the process's stop signals. On Linux the signals are blocked in this thread and
  // in every thread started after it (they are taken by Wait), so construct it before any other
  // thread exists; SIGPIPE is ignored. At most one instance at a time.
  StopRequest();
  ~StopRequest();
  StopRequest(const StopRequest&) = delete;
  StopRequest& operator=(const StopRequest&) = delete;

  // Blocks until a stop is asked for; returns what asked ("SIGTERM", "Ctrl-C", "service stop").
  // Call it from the thread that constructed the StopRequest.
  std::string Wait();
  // Asks for a stop from any thread.
  void Request(const std::string& reason);
};

}  // namespace dxshim
