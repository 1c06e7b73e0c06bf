// Starting, ending and supervising the children of nssm.exe, rke2.exe and the EKS service host.
#include "tests/support/node_standin/child_process.h"

#include "tests/support/node_standin/service_runner.h"

namespace dxshim::test::node_standin {

std::optional<PROCESS_INFORMATION> StartChild(const std::wstring& command,
                                              const std::wstring& directory, DWORD& error) {
  STARTUPINFOW startup{};
  startup.cb = sizeof(startup);
  PROCESS_INFORMATION child{};
  std::vector<wchar_t> line(command.begin(), command.end());
  line.push_back(L'\0');
  if (!CreateProcessW(nullptr, line.data(), nullptr, nullptr, FALSE, CREATE_UNICODE_ENVIRONMENT,
                      nullptr, directory.empty() ? nullptr : directory.c_str(), &startup, &child)) {
    error = GetLastError();
    return std::nullopt;
  }
  CloseHandle(child.hThread);
  child.hThread = nullptr;
  return child;
}

void EndChild(HANDLE process) {
  TerminateProcess(process, 1);
  WaitForSingleObject(process, 10000);
  CloseHandle(process);
}

std::optional<ChildEnded> Supervise(const std::vector<HANDLE>& children) {
  std::vector<HANDLE> waits{g_stop};
  waits.insert(waits.end(), children.begin(), children.end());
  const DWORD which =
      WaitForMultipleObjects(static_cast<DWORD>(waits.size()), waits.data(), FALSE, INFINITE);
  std::optional<ChildEnded> ended;
  if (which > WAIT_OBJECT_0 && which < WAIT_OBJECT_0 + waits.size()) {
    ended = ChildEnded{which - WAIT_OBJECT_0 - 1, 0};
    GetExitCodeProcess(children[ended->index], &ended->exit_code);
  }
  // The last started first (rke2: kubelet before its containerd).
  for (std::size_t i = children.size(); i-- > 0;) {
    if (ended && ended->index == i) {
      CloseHandle(children[i]);
    } else {
      EndChild(children[i]);
    }
  }
  return ended;
}

}  // namespace dxshim::test::node_standin
