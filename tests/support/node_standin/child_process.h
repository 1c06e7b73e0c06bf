// Starting the stand-ins' children and supervising them until STOP or until one ends.
#pragma once

#include <windows.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin {

// Starts COMMAND (a whole command line, its program the first word) in DIRECTORY (empty: this
// process's own), without handing it any handle; nullopt with GetLastError()'s code in `error`.
// The thread handle is closed.
std::optional<PROCESS_INFORMATION> StartChild(const std::wstring& command,
                                              const std::wstring& directory, DWORD& error);

// Ends a child and waits for it (at most 10 s), then closes its handle.
void EndChild(HANDLE process);

struct ChildEnded {
  std::size_t index = 0;  // which of the children
  DWORD exit_code = 0;
};

// Waits for g_stop or for one of CHILDREN to end by itself, then ends (and waits for) all the
// others and closes every handle: nullopt on g_stop, else the child that ended and its exit code.
std::optional<ChildEnded> Supervise(const std::vector<HANDLE>& children);

}  // namespace dxshim::test::node_standin
