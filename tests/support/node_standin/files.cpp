// The node stand-in's own path, parts of paths, and reading and appending to text files.
#include "tests/support/node_standin/files.h"

#include <windows.h>

#include <cstddef>

#include "devices/windows/wide_text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Narrow;
using dxshim::devices::windows::Utf8FromWide;

std::wstring SelfPath() {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetModuleFileNameW(nullptr, path.data(), static_cast<DWORD>(path.size()));
    if (n == 0) return L"";
    if (n < path.size()) {
      path.resize(n);
      return path;
    }
    path.resize(path.size() * 2);
  }
}

std::wstring FolderOf(const std::wstring& path) {
  const auto slash = path.find_last_of(L"\\/");
  return slash == std::wstring::npos ? L"." : path.substr(0, slash);
}

std::wstring FileNameOf(const std::wstring& path) {
  const auto slash = path.find_last_of(L"\\/");
  return slash == std::wstring::npos ? path : path.substr(slash + 1);
}

std::wstring OnTheCurrentDrive(std::wstring path) {
  const auto slash = [](wchar_t c) { return c == L'/' || c == L'\\'; };
  if (path.empty() || !slash(path[0]) || (path.size() > 1 && slash(path[1]))) return path;
  wchar_t current[MAX_PATH] = {};
  const DWORD length = GetCurrentDirectoryW(MAX_PATH, current);
  std::wstring drive = L"C:";
  if (length >= 2 && current[1] == L':') {
    drive = std::wstring(current, 2);
  } else if (const DWORD n = GetEnvironmentVariableW(L"SystemDrive", current, MAX_PATH); n == 2) {
    drive = std::wstring(current, 2);
  }
  for (auto& c : path) c = c == L'/' ? L'\\' : c;
  return drive + path;
}

void AppendLine(const std::wstring& file, const std::string& line) {
  const HANDLE handle = CreateFileW(file.c_str(), FILE_APPEND_DATA,
                                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                    OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return;
  LARGE_INTEGER end{};
  SetFilePointerEx(handle, end, nullptr, FILE_END);
  const std::string text = line + "\n";
  DWORD written = 0;
  WriteFile(handle, text.data(), static_cast<DWORD>(text.size()), &written, nullptr);
  CloseHandle(handle);
}

void LogStart(const wchar_t* log_name) {
  AppendLine(
      FolderOf(SelfPath()) + L"\\" + log_name,
      "start " + std::to_string(GetCurrentProcessId()) + " " + Utf8FromWide(GetCommandLineW()));
}

std::optional<std::string> ReadTextFile(const std::wstring& path) {
  const HANDLE handle = CreateFileW(path.c_str(), GENERIC_READ,
                                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                    OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return std::nullopt;
  std::string bytes;
  char buffer[4096];
  DWORD n = 0;
  while (ReadFile(handle, buffer, sizeof(buffer), &n, nullptr) && n > 0) bytes.append(buffer, n);
  CloseHandle(handle);
  if (bytes.size() >= 2 && bytes[0] == '\xFF' && bytes[1] == '\xFE') {
    std::wstring wide((bytes.size() - 2) / 2, L'\0');
    for (std::size_t i = 0; i < wide.size(); ++i) {
      const auto low = static_cast<unsigned char>(bytes[2 + 2 * i]);
      const auto high = static_cast<unsigned char>(bytes[3 + 2 * i]);
      wide[i] = static_cast<wchar_t>(low | (high << 8));
    }
    return Narrow(wide.data(), wide.size());
  }
  if (bytes.rfind("\xEF\xBB\xBF", 0) == 0) bytes.erase(0, 3);
  return bytes;
}

}  // namespace dxshim::test::node_standin
