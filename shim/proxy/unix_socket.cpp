#include "shim/proxy/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace dxshim {
namespace {

std::string Errno(int err) { return std::strerror(err); }

}  // namespace

bool UnixSocketAnswers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const bool answered = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return answered;
}

void PrepareUnixSocketPath(const std::string& path) {
  const std::filesystem::path socket_path(path);
  std::error_code ec;
  std::filesystem::create_directories(socket_path.parent_path(), ec);
  if (ec) {
    throw std::runtime_error("cannot create directory " + socket_path.parent_path().string() +
                             ": " + ec.message());
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw std::runtime_error("cannot inspect " + path + ": " + Errno(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    throw std::runtime_error(path + " exists and is not a socket; refusing to replace it");
  }
  if (UnixSocketAnswers(path)) {
    throw std::runtime_error("another server is already listening on " + path +
                             "; refusing to start a second one");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw std::runtime_error("cannot remove stale socket " + path + ": " + Errno(errno));
  }
}

UnixSocketFile::UnixSocketFile(std::string path, mode_t mode) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    throw std::runtime_error("listening socket " + path_ + " is missing: " + Errno(errno));
  }
  device_ = st.st_dev;
  inode_ = st.st_ino;
  if (::chmod(path_.c_str(), mode) != 0) {
    throw std::runtime_error("cannot set mode of " + path_ + ": " + Errno(errno));
  }
}

UnixSocketFile::~UnixSocketFile() {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == device_ && st.st_ino == inode_) {
    ::unlink(path_.c_str());
  }
}

}  // namespace dxshim
