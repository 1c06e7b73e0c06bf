// The Windows host's files, environment, clock and console (programs and services:
// powershell_windows_programs.cpp).
#include "tests/support/node_standin/powershell_windows_host.h"

#include <windows.h>

#include <cstdio>
#include <vector>

#include "devices/windows/wide_text.h"

namespace dxshim::test::node_standin::powershell {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

// PATH for a Win32 call: PowerShell's file system provider takes / for \ on Windows (so that
// `/var/lib/x` is on the current drive; wine would read a path starting with / as a Unix path).
std::wstring Win32Path(const std::string& path) {
  std::wstring wide = Widen(path);
  for (auto& c : wide) c = c == L'/' ? L'\\' : c;
  return wide;
}

namespace {

std::string ErrorText(DWORD error, const std::string& path) {
  switch (error) {
    case ERROR_PATH_NOT_FOUND:
      return "Could not find a part of the path '" + path + "'.";
    case ERROR_FILE_NOT_FOUND:
      return "Could not find file '" + path + "'.";
    case ERROR_ACCESS_DENIED:
      return "Access to the path '" + path + "' is denied.";
    case ERROR_SHARING_VIOLATION:
      return "The process cannot access the file '" + path +
             "' because it is being used by another process.";
    default:
      return "'" + path + "': Windows error " + std::to_string(error);
  }
}

void WriteHandle(DWORD which, const std::string& text) {
  const HANDLE handle = GetStdHandle(which);
  if (handle == nullptr || handle == INVALID_HANDLE_VALUE) return;
  DWORD written = 0;
  WriteFile(handle, text.data(), static_cast<DWORD>(text.size()), &written, nullptr);
}

bool RemoveTree(const std::wstring& path) {
  WIN32_FIND_DATAW entry{};
  const HANDLE find = FindFirstFileW((path + L"\\*").c_str(), &entry);
  if (find != INVALID_HANDLE_VALUE) {
    do {
      const std::wstring name = entry.cFileName;
      if (name == L"." || name == L"..") continue;
      const std::wstring child = path + L"\\" + name;
      if (entry.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
        if (!RemoveTree(child)) {
          FindClose(find);
          return false;
        }
      } else if (!DeleteFileW(child.c_str())) {
        FindClose(find);
        return false;
      }
    } while (FindNextFileW(find, &entry));
    FindClose(find);
  }
  return RemoveDirectoryW(path.c_str()) != FALSE;
}

}  // namespace

std::optional<std::string> WindowsHost::ReadFile(const std::string& path) {
  const HANDLE handle = CreateFileW(Win32Path(path).c_str(), GENERIC_READ,
                                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                    OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return std::nullopt;
  std::string bytes;
  char buffer[8192];
  DWORD n = 0;
  while (::ReadFile(handle, buffer, sizeof(buffer), &n, nullptr) && n > 0) bytes.append(buffer, n);
  CloseHandle(handle);
  return bytes;
}

bool WindowsHost::WriteFile(const std::string& path, const std::string& bytes, bool append,
                            std::string& error) {
  const HANDLE handle =
      CreateFileW(Win32Path(path).c_str(), append ? FILE_APPEND_DATA : GENERIC_WRITE,
                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                  append ? OPEN_ALWAYS : CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (handle == INVALID_HANDLE_VALUE) {
    error = ErrorText(GetLastError(), FullPath(path));
    return false;
  }
  if (append) {
    LARGE_INTEGER end{};
    SetFilePointerEx(handle, end, nullptr, FILE_END);
  }
  DWORD written = 0;
  const bool ok = ::WriteFile(handle, bytes.data(), static_cast<DWORD>(bytes.size()), &written,
                              nullptr) != FALSE;
  if (!ok) error = ErrorText(GetLastError(), FullPath(path));
  CloseHandle(handle);
  return ok;
}

PathKind WindowsHost::KindOf(const std::string& path) {
  const DWORD attributes = GetFileAttributesW(Win32Path(path).c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) return PathKind::kNone;
  return (attributes & FILE_ATTRIBUTE_DIRECTORY) ? PathKind::kDirectory : PathKind::kFile;
}

bool WindowsHost::MakeDirectory(const std::string& path, std::string& error) {
  const std::wstring full = Widen(FullPath(path));
  // Each missing folder from the root down, as Directory.CreateDirectory does.
  for (std::size_t at = full.find_first_of(L"\\/", 3);; at = full.find_first_of(L"\\/", at + 1)) {
    const std::wstring part = at == std::wstring::npos ? full : full.substr(0, at);
    if (!CreateDirectoryW(part.c_str(), nullptr) && GetLastError() != ERROR_ALREADY_EXISTS) {
      error = ErrorText(GetLastError(), Utf8FromWide(part.c_str()));
      return false;
    }
    if (at == std::wstring::npos) return true;
  }
}

bool WindowsHost::RemovePath(const std::string& path, bool recurse, std::string& error) {
  const std::wstring wide = Win32Path(path);
  bool ok = false;
  if (KindOf(path) == PathKind::kDirectory) {
    ok = recurse ? RemoveTree(wide) : RemoveDirectoryW(wide.c_str()) != FALSE;
  } else {
    ok = DeleteFileW(wide.c_str()) != FALSE;
  }
  if (!ok) error = ErrorText(GetLastError(), FullPath(path));
  return ok;
}

std::string WindowsHost::FullPath(const std::string& path) {
  const std::wstring wide = Win32Path(path);
  std::vector<wchar_t> buffer(MAX_PATH);
  for (;;) {
    const DWORD n =
        GetFullPathNameW(wide.c_str(), static_cast<DWORD>(buffer.size()), buffer.data(), nullptr);
    if (n == 0) return path;
    if (n < buffer.size()) return Utf8FromWide(buffer.data());
    buffer.resize(n + 1);
  }
}

std::string WindowsHost::CurrentDirectory() {
  std::vector<wchar_t> buffer(MAX_PATH);
  const DWORD n = GetCurrentDirectoryW(static_cast<DWORD>(buffer.size()), buffer.data());
  if (n == 0 || n >= buffer.size()) return "";
  return Utf8FromWide(buffer.data());
}

std::optional<std::string> WindowsHost::GetEnvironment(const std::string& name) {
  const std::wstring wide = Widen(name);
  const DWORD size = GetEnvironmentVariableW(wide.c_str(), nullptr, 0);
  if (size == 0) return std::nullopt;
  std::vector<wchar_t> buffer(size);
  GetEnvironmentVariableW(wide.c_str(), buffer.data(), size);
  return Utf8FromWide(buffer.data());
}

void WindowsHost::SetEnvironment(const std::string& name, const std::optional<std::string>& value) {
  SetEnvironmentVariableW(Widen(name).c_str(), value ? Widen(*value).c_str() : nullptr);
}

std::string WindowsHost::RoundTripNow() {
  // DateTime.Now.ToString("o"): local time to 100 ns, then the UTC offset.
  FILETIME utc{};
  GetSystemTimeAsFileTime(&utc);
  FILETIME local{};
  FileTimeToLocalFileTime(&utc, &local);
  SYSTEMTIME time{};
  FileTimeToSystemTime(&local, &time);
  const ULONGLONG ticks =
      (static_cast<ULONGLONG>(local.dwHighDateTime) << 32) | local.dwLowDateTime;
  const auto fraction = static_cast<unsigned long>(ticks % 10000000ULL);
  const ULONGLONG utc_ticks =
      (static_cast<ULONGLONG>(utc.dwHighDateTime) << 32) | utc.dwLowDateTime;
  const long long offset_minutes =
      (static_cast<long long>(ticks) - static_cast<long long>(utc_ticks)) / 600000000LL;
  char text[64];
  std::snprintf(text, sizeof(text), "%04u-%02u-%02uT%02u:%02u:%02u.%07lu%c%02lld:%02lld",
                time.wYear, time.wMonth, time.wDay, time.wHour, time.wMinute, time.wSecond,
                fraction, offset_minutes < 0 ? '-' : '+',
                (offset_minutes < 0 ? -offset_minutes : offset_minutes) / 60,
                (offset_minutes < 0 ? -offset_minutes : offset_minutes) % 60);
  return text;
}

void WindowsHost::Sleep(std::chrono::milliseconds duration) {
  ::Sleep(static_cast<DWORD>(duration.count()));
}

void WindowsHost::WriteOutput(const std::string& text) { WriteHandle(STD_OUTPUT_HANDLE, text); }

void WindowsHost::WriteError(const std::string& text) { WriteHandle(STD_ERROR_HANDLE, text); }

}  // namespace dxshim::test::node_standin::powershell
