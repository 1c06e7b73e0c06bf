// What the installer asks dxshim itself, over the pipe it serves (a channel that is there
// whenever dxshim serves anybody, needing no optional setting): which processes made CRI calls
// through it, and whether the runtime answers a CRI call made through it. The CLI implements it
// with gRPC (shim/doctor/dxshim_status.h); the unit tests with an in-memory node.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::install {

// One client process of dxshim's pipe that made CRI calls through it.
struct CriCaller {
  std::uint32_t pid = 0;
  std::string program;  // its executable's file name, lower case (kubelet.exe)
  std::uint64_t calls = 0;
  std::int64_t first_call_unix_ms = 0;
  std::int64_t last_call_unix_ms = 0;
};

struct CriCallers {
  std::uint32_t server_pid = 0;  // the process that answered: dxshim's own pid, by its own word
  std::vector<CriCaller> callers;
};

class DxshimProbe {
 public:
  virtual ~DxshimProbe() = default;
  // dxshim's record of the CRI calls made through `pipe_path` (\\.\pipe\NAME); nullopt, with
  // `error` saying why, when nothing answers the question there.
  virtual std::optional<CriCallers> Callers(const std::string& pipe_path, std::string& error) = 0;
  // Whether a CRI Version call made through `pipe_path` is answered OK within `timeout`: dxshim
  // relayed it to a runtime that answered, or the runtime serves the pipe itself.
  virtual bool RuntimeAnswers(const std::string& pipe_path, std::chrono::milliseconds timeout) = 0;
};

}  // namespace dxshim::install
