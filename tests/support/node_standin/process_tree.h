// Ending a process's descendants, as NSSM 2.24 does when its application ends.
#pragma once

#include <windows.h>

namespace dxshim::test::node_standin {

// Terminates, top down, the processes descended from PID that started while it lived (between
// CREATED and ENDED: a later process that reuses a pid is no descendant), and waits for each, as
// NSSM 2.24's kill_process_tree (process.cpp, check_parent) does with its application's tree.
void KillProcessTree(DWORD pid, const FILETIME& created, const FILETIME& ended);

}  // namespace dxshim::test::node_standin
