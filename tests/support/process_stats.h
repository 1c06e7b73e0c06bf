// What /proc says about another process (dxshim, in tests that load it): the CPU time it has
// used, the file descriptors it holds, and the lowest descriptor number it could open next.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace dxshim::test {

// User plus system CPU time of every thread of `pid` so far, in seconds (/proc/PID/stat).
double CpuSeconds(pid_t pid);
// Open file descriptors of `pid` (entries of /proc/PID/fd).
std::size_t OpenFds(pid_t pid);
// The descriptor `pid` would get from its next open, accept or socket call: the lowest number
// not in /proc/PID/fd. A soft RLIMIT_NOFILE at this number leaves it none to open.
int LowestFreeFd(pid_t pid);

}  // namespace dxshim::test
