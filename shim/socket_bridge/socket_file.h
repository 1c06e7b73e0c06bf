// Sockets that are files in a folder, as kubelet's device-plugin sockets are on Linux and on
// Windows (AF_UNIX on both: `C:\var\lib\kubelet\device-plugins\kubelet.sock`), with the rules a
// path must follow, and the one stand-in for AF_UNIX where it does not exist (wine 8.0's Winsock
// has none): a regular file at the same path that names a port on 127.0.0.1. The stand-in keeps
// everything else of a socket file (it is created where the socket would be, deleted the same
// way, and a kubelet that restarts replaces it), so only the address family differs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "shim/socket_bridge/socket_api.h"

namespace dxshim::socket_bridge {

enum class SocketFamily { kUnix, kTcpStandIn };
const char* ToString(SocketFamily family);

// An AF_UNIX address holds 108 bytes with the terminating NUL (UNIX_PATH_MAX in Windows'
// afunix.h and Linux's un.h), and Go, in which kubelet is written, refuses a path of 108 bytes
// (syscall: `n >= len(sa.raw.Path)`): a path may have at most 107 bytes (UTF-8 on Windows).
inline constexpr std::size_t kMaxSocketPathBytes = 107;

// Why a socket cannot be made at `path`: too long, or its folder missing or not a folder. Empty
// when it can.
std::string SocketPathProblem(const std::string& path);

// Listens at `path`: checks the rules above, deletes a stale file left there (by an earlier run;
// bind fails on any existing file), then binds. Invalid with `error` naming the path and the
// reason otherwise.
Socket ListenOnSocketFile(const std::string& path, SocketFamily family, std::string& error);
// A connection to whoever listens at `path`, or invalid with `error` set.
Socket ConnectToSocketFile(const std::string& path, SocketFamily family, std::string& error);

// The stand-in's file: "dxshim-tcp-stand-in 127.0.0.1:<port>\n".
bool WriteTcpStandIn(const std::string& path, std::uint16_t port, std::string& error);
std::optional<std::uint16_t> ReadTcpStandIn(const std::string& path);

// What a file at a path is, to tell a replaced file from the same one (a kubelet that restarted
// made a new kubelet.sock): the device and inode on POSIX, the volume and file index on Windows
// (read without following the reparse point an AF_UNIX socket file is), and when it was made. A
// file removed and made again at once can get the same inode; its creation time (Linux: the
// birth time where the file system keeps one, else the inode's change time, both in
// nanoseconds; Windows: the creation time in 100 ns) tells them apart.
struct FileIdentity {
  bool exists = false;
  unsigned long long device = 0, file = 0;
  long long created = 0;
  // When it was last written, in the same units as `created` (not part of the identity).
  long long modified = 0;
  bool operator==(const FileIdentity& o) const {
    return exists == o.exists && device == o.device && file == o.file && created == o.created;
  }
};
FileIdentity IdentifyFile(const std::string& path);

}  // namespace dxshim::socket_bridge
