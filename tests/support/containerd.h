// A real containerd (Debian's containerd + runc) private to one test: its own root, state,
// sockets and CRI configuration in a temporary directory, with the locally built pause and busybox
// images imported. Nothing is mocked.
#pragma once

#include <memory>
#include <string>

#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {

inline constexpr const char* kPauseImage = "registry.k8s.io/pause:3.6";
inline constexpr const char* kBusyboxImage = "dxshim.test/busybox:1";

// A 127.0.0.1 port nobody listens on now (bound, read and released: a later bind may still lose
// a race). Throws when none can be had.
int FreeLoopbackPort();

class Containerd {
 public:
  enum class Listen { kUnix, kUnixAndTcp };
  // Starts it and imports the images; throws on failure. kUnixAndTcp: CRI also on a free
  // 127.0.0.1 port (tcp_address()), kept across Restart.
  explicit Containerd(Listen listen = Listen::kUnix);
  // Removes every pod it still has, stops it, kills the shims left (of pods a test left after a
  // Kill or Stop), unmounts and deletes its directory.
  ~Containerd();

  const std::string& socket() const { return socket_; }
  const std::string& tcp_address() const { return tcp_address_; }  // "" with kUnix
  const TempDir& dir() const { return dir_; }
  void Kill();     // SIGKILL, as in a crash; containers keep running in their shims
  void Stop();     // SIGTERM, as a service stop; containers keep running in their shims
  void Restart();  // starts it again on the same state
  // Its configuration, to be edited while it is stopped; `socket` is where it serves gRPC once
  // restarted with the edit (a takeover moves it).
  std::string config_path() const { return dir_ / "config.toml"; }
  void ServeAt(const std::string& socket) { socket_ = socket; }
  std::string Log() const;

 private:
  void Launch();
  void ImportImages();
  void RemoveAllPods();
  void KillShims();
  void UnmountAll();

  TempDir dir_;
  std::string socket_;
  std::string tcp_address_;
  std::unique_ptr<Process> process_;
};

}  // namespace dxshim::test
