// The Windows host's copies, moves, folder listings, file hashes (BCrypt's SHA-256), owners
// (the file's security descriptor; under wine every process runs as one account, the owner of
// everything it makes: that account is reported as SYSTEM, S-1-5-18, which the installer
// DaemonSet's powershell.exe runs as and which owns what it makes on Windows) and the Windows
// version (RtlGetVersion: what [Environment]::OSVersion reports on .NET Framework 4.8 with a
// manifest for Windows 10).
#include <windows.h>
// windows.h first
#include <aclapi.h>
#include <bcrypt.h>
#include <sddl.h>

#include <algorithm>
#include <cstdio>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/powershell_windows_host.h"

namespace dxshim::test::node_standin::powershell {

using dxshim::devices::windows::Utf8FromWide;

namespace {

std::string Failure(const char* what, const std::string& path) {
  return std::string(what) + " '" + path + "': Windows error " + std::to_string(GetLastError());
}

// Whether SID is this process's own account (its token's user).
bool IsOwnAccount(PSID sid) {
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return false;
  char buffer[256];
  DWORD size = 0;
  const bool read = GetTokenInformation(token, TokenUser, buffer, sizeof buffer, &size);
  CloseHandle(token);
  return read && EqualSid(reinterpret_cast<TOKEN_USER*>(buffer)->User.Sid, sid);
}

}  // namespace

bool WindowsHost::CopyPath(const std::string& from, const std::string& to, std::string& error) {
  if (CopyFileW(Win32Path(from).c_str(), Win32Path(to).c_str(), FALSE)) return true;
  error = Failure("cannot copy to", to);
  return false;
}

bool WindowsHost::MovePath(const std::string& from, const std::string& to, std::string& error) {
  if (MoveFileExW(Win32Path(from).c_str(), Win32Path(to).c_str(),
                  MOVEFILE_REPLACE_EXISTING | MOVEFILE_COPY_ALLOWED)) {
    return true;
  }
  error = Failure("cannot move to", to);
  return false;
}

std::vector<std::string> WindowsHost::ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  WIN32_FIND_DATAW found;
  const HANDLE find = FindFirstFileW((Win32Path(path) + L"\\*").c_str(), &found);
  if (find == INVALID_HANDLE_VALUE) return names;
  do {
    const std::wstring name = found.cFileName;
    if (name != L"." && name != L"..") names.push_back(Utf8FromWide(name.c_str()));
  } while (FindNextFileW(find, &found));
  FindClose(find);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> WindowsHost::FileSha256(const std::string& path) {
  const auto bytes = ReadFile(path);
  if (!bytes) return std::nullopt;
  BCRYPT_ALG_HANDLE algorithm = nullptr;
  if (BCryptOpenAlgorithmProvider(&algorithm, BCRYPT_SHA256_ALGORITHM, nullptr, 0) != 0) {
    return std::nullopt;
  }
  UCHAR digest[32] = {};
  const NTSTATUS status =
      BCryptHash(algorithm, nullptr, 0, reinterpret_cast<PUCHAR>(const_cast<char*>(bytes->data())),
                 static_cast<ULONG>(bytes->size()), digest, sizeof digest);
  BCryptCloseAlgorithmProvider(algorithm, 0);
  if (status != 0) return std::nullopt;
  std::string hex;
  char two[3];
  for (const UCHAR b : digest) {
    std::snprintf(two, sizeof two, "%02X", b);
    hex += two;
  }
  return hex;
}

std::optional<std::string> WindowsHost::OwnerSid(const std::string& path) {
  PSID owner = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  std::wstring wide = Win32Path(path);
  if (GetNamedSecurityInfoW(wide.data(), SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION, &owner,
                            nullptr, nullptr, nullptr, &descriptor) != ERROR_SUCCESS) {
    return std::nullopt;
  }
  std::optional<std::string> text;
  LPSTR sid = nullptr;
  if (owner && IsOwnAccount(owner)) {
    text = "S-1-5-18";
  } else if (owner && ConvertSidToStringSidA(owner, &sid)) {
    text = sid;
    LocalFree(sid);
  }
  LocalFree(descriptor);
  return text;
}

std::string WindowsHost::OsVersion() {
  using RtlGetVersionFunction = LONG(WINAPI*)(OSVERSIONINFOW*);
  OSVERSIONINFOW info{};
  info.dwOSVersionInfoSize = sizeof info;
  const auto get = reinterpret_cast<RtlGetVersionFunction>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "RtlGetVersion")));
  if (get) get(&info);
  return std::to_string(info.dwMajorVersion) + "." + std::to_string(info.dwMinorVersion) + "." +
         std::to_string(info.dwBuildNumber) + ".0";
}

}  // namespace dxshim::test::node_standin::powershell
