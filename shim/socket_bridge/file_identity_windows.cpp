// IdentifyFile (socket_file.h) on Windows: the volume serial number and file index of the file
// itself (an AF_UNIX socket file is a reparse point: not followed), and its creation and last
// write times in 100 ns.
#include <filesystem>

#include "shim/socket_bridge/socket_file.h"

namespace dxshim::socket_bridge {

FileIdentity IdentifyFile(const std::string& path) {
  FileIdentity id;
  const std::filesystem::path file(std::u8string(path.begin(), path.end()));
  const HANDLE handle = CreateFileW(
      file.c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
      OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return id;
  BY_HANDLE_FILE_INFORMATION info{};
  if (GetFileInformationByHandle(handle, &info)) {
    id.exists = true;
    id.device = info.dwVolumeSerialNumber;
    id.file = (static_cast<unsigned long long>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
    id.created = static_cast<long long>(
        (static_cast<unsigned long long>(info.ftCreationTime.dwHighDateTime) << 32) |
        info.ftCreationTime.dwLowDateTime);
    id.modified = static_cast<long long>(
        (static_cast<unsigned long long>(info.ftLastWriteTime.dwHighDateTime) << 32) |
        info.ftLastWriteTime.dwLowDateTime);
  }
  CloseHandle(handle);
  return id;
}

}  // namespace dxshim::socket_bridge
