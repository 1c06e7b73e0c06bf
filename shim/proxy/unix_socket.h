// Hygiene for the unix socket dxshim listens on: kubelet must find exactly one live server there.
#pragma once

#include <sys/types.h>

#include <string>

namespace dxshim {

// True when a server accepts connections on the socket at `path`.
bool UnixSocketAnswers(const std::string& path);

// Makes `path` ready for a new listening socket: creates missing parent directories (0755),
// refuses (std::runtime_error) if another live server answers there or if the path is not a
// socket, and removes a stale socket left by a process that died.
void PrepareUnixSocketPath(const std::string& path);

// Owns the socket file once the server listens: sets its mode and removes it on destruction,
// unless another process has replaced it in the meantime.
class UnixSocketFile {
 public:
  UnixSocketFile(std::string path, mode_t mode);  // throws std::runtime_error
  ~UnixSocketFile();
  UnixSocketFile(const UnixSocketFile&) = delete;
  UnixSocketFile& operator=(const UnixSocketFile&) = delete;

 private:
  std::string path_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

}  // namespace dxshim
