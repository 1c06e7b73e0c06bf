// IdentifyFile (socket_file.h) on Linux: statx without following a symlink, the device and inode,
// the birth time where the file system keeps one (else the inode's change time) and the last
// write time, in nanoseconds.
#include <fcntl.h>
#include <sys/stat.h>

#include "shim/socket_bridge/socket_file.h"

namespace dxshim::socket_bridge {

FileIdentity IdentifyFile(const std::string& path) {
  FileIdentity id;
  struct statx st {};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW,
              STATX_INO | STATX_CTIME | STATX_BTIME | STATX_MTIME, &st) != 0) {
    return id;
  }
  id.exists = true;
  id.device = (static_cast<unsigned long long>(st.stx_dev_major) << 32) | st.stx_dev_minor;
  id.file = static_cast<unsigned long long>(st.stx_ino);
  const auto& made = (st.stx_mask & STATX_BTIME) != 0 ? st.stx_btime : st.stx_ctime;
  id.created = made.tv_sec * 1000000000LL + made.tv_nsec;
  id.modified = st.stx_mtime.tv_sec * 1000000000LL + st.stx_mtime.tv_nsec;
  return id;
}

}  // namespace dxshim::socket_bridge
