// Windows only: CUDA and NVML asked in a short-lived child process, on every discovery. CUDA lists
// its devices once per process, at cuInit, and nvcuda.dll cannot be unloaded after it: a service
// that asked in-process would keep the first answer, and the old driver's DLL, across a driver
// update that gives the adapters new LUIDs. The child is this same program with the hidden
// command `nvidia-uuids` (dxshim.exe and dxshim-devices.exe both have it); it prints what the
// library said as JSON (devices/nvidia_answers.h) and exits. A child that hangs is killed at the
// deadline, and one that crashes or answers what is not its JSON gives "no CUDA" (or no NVML)
// with the reason: discovery goes on without it, never stuck.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "devices/nvidia_answers.h"

namespace dxshim::devices::windows {

inline constexpr std::chrono::seconds kNvidiaQueryDeadline{30};

struct NvidiaQuery {
  std::wstring program;  // the child's program; empty: this program
  std::chrono::milliseconds deadline = kNvidiaQueryDeadline;
};

// `nvidia-uuids cuda` in a child.
CudaReport AskCuda(const NvidiaQuery& query);
// `nvidia-uuids nvml BUSID...` in a child.
NvmlReport AskNvml(const NvidiaQuery& query, const std::vector<std::string>& bus_ids);

// The child's side: `args` are what follows "nvidia-uuids". Prints the report's JSON on stdout;
// returns 0, or 2 on bad usage (said on stderr).
int RunNvidiaUuidsCommand(const std::vector<std::string>& args);

}  // namespace dxshim::devices::windows
