// Windows: the process serving a named pipe (GetNamedPipeServerProcessId on an instance opened
// for identification only, so that the server cannot act as doctor) and its program's name.
// clang-format off
#include <windows.h>
// clang-format on

#include "devices/windows/wide_text.h"
#include "shim/doctor/endpoint_identity.h"
#include "shim/install/kubelet/kubelet_launch.h"
#include "shim/windows/windows_node_system.h"

namespace dxshim::doctor {

EndpointServing EndpointServer(const std::string& endpoint) {
  using State = EndpointServing::State;
  EndpointServing serving;
  const auto pipe_path = install::PipePathOf(endpoint);
  if (pipe_path.rfind("\\\\.\\pipe\\", 0) != 0) return serving;
  const HANDLE pipe =
      CreateFileW(devices::windows::Widen(pipe_path).c_str(), GENERIC_READ | GENERIC_WRITE, 0,
                  nullptr, OPEN_EXISTING, SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
  if (pipe == INVALID_HANDLE_VALUE) {
    // Busy or denied: something serves it, but who is not known here.
    if (GetLastError() == ERROR_FILE_NOT_FOUND) serving.state = State::kNobody;
    return serving;
  }
  ULONG pid = 0;
  const bool known = GetNamedPipeServerProcessId(pipe, &pid) != FALSE;
  CloseHandle(pipe);
  if (!known) return serving;
  serving.state = State::kProcess;
  serving.process = {static_cast<std::uint32_t>(pid), "(a process that has ended)"};
  for (const auto& p : windows::MakeWindowsNodeSystem()->Processes()) {
    if (p.pid == pid) serving.process.program = install::FileNameOf(p.program);
  }
  return serving;
}

}  // namespace dxshim::doctor
