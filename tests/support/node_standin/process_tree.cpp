// Killing the descendants of nssm.exe's application (NSSM 2.24 process.cpp: kill_process_tree).
#include "tests/support/node_standin/process_tree.h"

// clang-format off
#include <windows.h>
#include <tlhelp32.h>
// clang-format on

#include <vector>

namespace dxshim::test::node_standin {

void KillProcessTree(DWORD pid, const FILETIME& created, const FILETIME& ended) {
  const HANDLE snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (snapshot == INVALID_HANDLE_VALUE) return;
  std::vector<DWORD> children;
  PROCESSENTRY32W entry{};
  entry.dwSize = sizeof(entry);
  for (bool more = Process32FirstW(snapshot, &entry) != FALSE; more;
       more = Process32NextW(snapshot, &entry) != FALSE) {
    if (entry.th32ParentProcessID == pid && entry.th32ProcessID != pid) {
      children.push_back(entry.th32ProcessID);
    }
  }
  CloseHandle(snapshot);
  for (const DWORD child : children) {
    const HANDLE process =
        OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_TERMINATE | SYNCHRONIZE, FALSE, child);
    if (!process) continue;
    FILETIME start{};
    FILETIME exit{};
    FILETIME kernel{};
    FILETIME user{};
    const bool known = GetProcessTimes(process, &start, &exit, &kernel, &user) != FALSE;
    // check_parent: started no earlier than the application and no later than its end.
    if (known && CompareFileTime(&created, &start) <= 0 && CompareFileTime(&ended, &start) >= 0) {
      TerminateProcess(process, 0);
      WaitForSingleObject(process, 10000);
      KillProcessTree(child, created, ended);
    }
    CloseHandle(process);
  }
}

}  // namespace dxshim::test::node_standin
