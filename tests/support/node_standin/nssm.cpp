// nssm.exe: a service that starts the Application of its registry Parameters and supervises it.
#include <windows.h>

#include <functional>
#include <optional>
#include <string>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/child_process.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/process_tree.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;

namespace {

std::optional<std::wstring> RegistryText(HKEY key, const wchar_t* name) {
  DWORD type = 0;
  DWORD size = 0;
  if (RegQueryValueExW(key, name, nullptr, &type, nullptr, &size) != ERROR_SUCCESS ||
      (type != REG_SZ && type != REG_EXPAND_SZ))
    return std::nullopt;
  std::wstring value(size / sizeof(wchar_t) + 1, L'\0');
  DWORD read = static_cast<DWORD>(value.size() * sizeof(wchar_t));
  if (RegQueryValueExW(key, name, nullptr, &type, reinterpret_cast<BYTE*>(value.data()), &read) !=
      ERROR_SUCCESS)
    return std::nullopt;
  value.resize(read / sizeof(wchar_t));
  while (!value.empty() && value.back() == L'\0') value.pop_back();
  return type == REG_EXPAND_SZ ? ExpandEnvironment(value) : value;
}

}  // namespace

DWORD Nssm(const std::wstring& service, const std::function<void()>& ready) {
  const std::wstring folder = FolderOf(SelfPath());
  const std::wstring log = folder + L"\\nssm-starts.log";
  const auto fail = [&log](const std::string& why) {
    AppendLine(log, "error " + why);
    return DWORD{2};
  };
  const std::wstring key_path =
      L"SYSTEM\\CurrentControlSet\\Services\\" + service + L"\\Parameters";
  HKEY key = nullptr;
  if (RegOpenKeyExW(HKEY_LOCAL_MACHINE, key_path.c_str(), 0, KEY_READ, &key) != ERROR_SUCCESS)
    return fail("no registry key HKLM\\" + Utf8FromWide(key_path.c_str()));
  const auto application = RegistryText(key, L"Application");
  const std::wstring parameters = RegistryText(key, L"AppParameters").value_or(L"");
  std::wstring directory = RegistryText(key, L"AppDirectory").value_or(L"");
  RegCloseKey(key);
  if (!application || application->empty())
    return fail("no Application in HKLM\\" + Utf8FromWide(key_path.c_str()));

  // NSSM 2.24 service.cpp start_service: `"%s" %s` of Application and AppParameters (the space
  // even when there are none), in AppDirectory, else in Application's folder (registry.cpp
  // get_parameters: strip_basename), else in the Windows folder.
  const std::wstring command = L"\"" + *application + L"\" " + parameters;
  if (directory.empty()) {
    directory =
        application->find_first_of(L"\\/") == std::wstring::npos ? L"" : FolderOf(*application);
  }
  if (directory.empty()) {
    wchar_t windows[MAX_PATH] = {};
    GetWindowsDirectoryW(windows, MAX_PATH);
    directory = windows;
  }

  DWORD error = 0;
  const auto child = StartChild(command, directory, error);
  if (!child) {
    return fail("cannot start " + Utf8FromWide(command.c_str()) + " in " +
                Utf8FromWide(directory.c_str()) + " (error " + std::to_string(error) + ")");
  }
  FILETIME created{};
  FILETIME exited{};
  FILETIME kernel{};
  FILETIME user{};
  GetProcessTimes(child->hProcess, &created, &exited, &kernel, &user);
  AppendLine(log,
             "start " + std::to_string(child->dwProcessId) + " " + Utf8FromWide(command.c_str()));
  ready();
  const auto ended = Supervise({child->hProcess});
  // NSSM 2.24 end_service: the application's process tree is killed once it has ended.
  FILETIME now{};
  GetSystemTimeAsFileTime(&now);
  KillProcessTree(child->dwProcessId, created, now);
  return ended ? ended->exit_code : 0;
}

}  // namespace dxshim::test::node_standin
