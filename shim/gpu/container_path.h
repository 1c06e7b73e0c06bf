// Where a mount lands inside the container, in the form the runtime hands it on, so that dxshim
// compares what a config already mounts with what it adds the way the runtime will see them.
//
// Windows: kubelet sends a pod volume's mountPath as `c:/Windows/System32/x.dll` (drive letter
// added, forward slashes kept: kubelet's makeAbsolutePath), a device plugin sends whatever it
// likes, dxshim writes `C:\Windows\System32\x.dll`. containerd 1.7 (parseMount in
// pkg/cri/opts/spec_windows_opts.go) then leaves the destination of a named-pipe source and a bare
// drive (`X:`) as they are, and otherwise applies Go's filepath.Clean (`/` becomes `\`, `.`, `..`
// and doubled or trailing separators resolved) and puts `C:` before a destination that starts
// with `\`. HCS maps both mounts of one file, and which wins depends on containerd's sort: two
// spellings of one destination must count as one. Windows compares the result without case.
// Linux: the kernel resolves `.`, `..` and doubled slashes; case matters.
#pragma once

#include <string>
#include <string_view>

namespace dxshim {

// Go's filepath.Clean with Windows rules: the volume (`C:` or `\\host\share`) kept as written,
// both separators accepted, `\` written; "." for an empty path.
std::string CleanWindowsPath(std::string_view path);

// Go's filepath.Clean with POSIX rules.
std::string CleanPosixPath(std::string_view path);

// The destination containerd on Windows gives HCS for a CRI mount of `host_path` on
// `container_path` (see above).
std::string WindowsMountDestination(std::string_view container_path, std::string_view host_path);

// A key that is equal for two mounts exactly when the runtime puts them on one destination:
// WindowsMountDestination without case on Windows, CleanPosixPath on Linux.
std::string MountDestinationKey(std::string_view container_path, std::string_view host_path,
                                bool windows);

}  // namespace dxshim
