// The Windows host's programs (finding them as PowerShell's command search does, starting them
// with CreateProcess) and its service control manager calls.
#include <windows.h>

#include <cwchar>
#include <utility>
#include <vector>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/powershell_value.h"
#include "tests/support/node_standin/powershell_windows_host.h"

namespace dxshim::test::node_standin::powershell {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> items;
  std::size_t i = 0;
  while (i <= list.size()) {
    const auto semicolon = list.find(';', i);
    const auto end = semicolon == std::string::npos ? list.size() : semicolon;
    if (end > i) items.push_back(list.substr(i, end - i));
    i = end + 1;
  }
  return items;
}

// CANDIDATE's path with its file name as the file system spells it, if it is a file.
std::optional<std::string> ExistingFile(const std::string& candidate) {
  WIN32_FIND_DATAW entry{};
  const HANDLE find = FindFirstFileW(Win32Path(candidate).c_str(), &entry);
  if (find == INVALID_HANDLE_VALUE) return std::nullopt;
  FindClose(find);
  if (entry.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) return std::nullopt;
  const auto slash = candidate.find_last_of("\\/");
  const std::string folder = slash == std::string::npos ? "" : candidate.substr(0, slash + 1);
  return folder + Utf8FromWide(entry.cFileName);
}

class ServiceHandle {
 public:
  ServiceHandle(const std::string& name, DWORD access) {
    manager_ = OpenSCManagerW(nullptr, nullptr, SC_MANAGER_CONNECT);
    if (manager_) service_ = OpenServiceW(manager_, Widen(name).c_str(), access);
    error_ = service_ ? 0 : GetLastError();
  }
  ~ServiceHandle() {
    if (service_) CloseServiceHandle(service_);
    if (manager_) CloseServiceHandle(manager_);
  }
  ServiceHandle(const ServiceHandle&) = delete;
  ServiceHandle& operator=(const ServiceHandle&) = delete;
  SC_HANDLE manager() const { return manager_; }
  SC_HANDLE get() const { return service_; }
  DWORD error() const { return error_; }

 private:
  SC_HANDLE manager_ = nullptr;
  SC_HANDLE service_ = nullptr;
  DWORD error_ = 0;
};

const char* StatusName(DWORD state) {
  switch (state) {
    case SERVICE_STOPPED:
      return "Stopped";
    case SERVICE_START_PENDING:
      return "StartPending";
    case SERVICE_STOP_PENDING:
      return "StopPending";
    case SERVICE_RUNNING:
      return "Running";
    case SERVICE_CONTINUE_PENDING:
      return "ContinuePending";
    case SERVICE_PAUSE_PENDING:
      return "PausePending";
    case SERVICE_PAUSED:
      return "Paused";
    default:
      return "Unknown";
  }
}

}  // namespace

std::optional<std::string> WindowsHost::FindProgram(const std::string& name) {
  // Windows PowerShell's command search: NAME as it is, then with each PATHEXT extension, then
  // with .ps1; in NAME's own folder when it has one, else in each folder of PATH (never the
  // current folder).
  std::vector<std::string> extensions = {""};
  for (const auto& extension : Split(GetEnvironment("PATHEXT").value_or(".COM;.EXE;.BAT;.CMD"))) {
    extensions.push_back(extension);
  }
  extensions.push_back(".ps1");
  std::vector<std::string> folders;
  if (name.find_first_of("\\/:") != std::string::npos) {
    folders.push_back("");
  } else {
    for (auto folder : Split(GetEnvironment("PATH").value_or(""))) {
      if (folder.size() >= 2 && folder.front() == '"' && folder.back() == '"') {
        folder = folder.substr(1, folder.size() - 2);
      }
      if (!folder.empty() && folder.back() != '\\' && folder.back() != '/') folder += "\\";
      folders.push_back(folder);
    }
  }
  for (const auto& folder : folders) {
    for (const auto& extension : extensions) {
      const std::string candidate = folder + name + extension;
      if (const auto found = ExistingFile(candidate)) {
        return folder.empty() ? FullPath(*found) : *found;
      }
    }
  }
  return std::nullopt;
}

ProgramRun WindowsHost::Run(const std::string& command_line, const std::string& directory,
                            bool capture, bool above_normal) {
  ProgramRun run;
  SECURITY_ATTRIBUTES inheritable{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read_end = nullptr;
  HANDLE write_end = nullptr;
  if (capture && !CreatePipe(&read_end, &write_end, &inheritable, 0)) {
    run.error = GetLastError();
    return run;
  }
  if (read_end) SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
  STARTUPINFOW startup{};
  startup.cb = sizeof(startup);
  startup.dwFlags = STARTF_USESTDHANDLES;
  // The child gets this process's standard handles (its output, unless captured), as a program
  // PowerShell starts does.
  const HANDLE std_handles[] = {GetStdHandle(STD_INPUT_HANDLE), GetStdHandle(STD_OUTPUT_HANDLE),
                                GetStdHandle(STD_ERROR_HANDLE)};
  for (const HANDLE handle : std_handles) {
    if (handle && handle != INVALID_HANDLE_VALUE) {
      SetHandleInformation(handle, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT);
    }
  }
  startup.hStdInput = std_handles[0];
  startup.hStdOutput = capture ? write_end : std_handles[1];
  startup.hStdError = std_handles[2];
  std::wstring line = Widen(command_line);
  std::vector<wchar_t> mutable_line(line.begin(), line.end());
  mutable_line.push_back(L'\0');
  const std::wstring folder = Widen(directory);
  PROCESS_INFORMATION child{};
  const BOOL started = CreateProcessW(
      nullptr, mutable_line.data(), nullptr, nullptr, TRUE, CREATE_UNICODE_ENVIRONMENT, nullptr,
      directory.empty() ? nullptr : folder.c_str(), &startup, &child);
  if (!started) run.error = GetLastError();
  if (write_end) CloseHandle(write_end);
  if (!started) {
    if (read_end) CloseHandle(read_end);
    return run;
  }
  run.started = true;
  CloseHandle(child.hThread);
  if (above_normal) SetPriorityClass(child.hProcess, ABOVE_NORMAL_PRIORITY_CLASS);
  if (read_end) {
    char buffer[4096];
    DWORD n = 0;
    while (::ReadFile(read_end, buffer, sizeof(buffer), &n, nullptr) && n > 0) {
      run.output.append(buffer, n);
    }
    CloseHandle(read_end);
  }
  WaitForSingleObject(child.hProcess, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(child.hProcess, &code);
  CloseHandle(child.hProcess);
  run.exit_code = static_cast<std::int32_t>(code);  // .NET's ExitCode is an int
  return run;
}

ServiceInfo WindowsHost::QueryService(const std::string& name) {
  ServiceInfo info;
  const ServiceHandle service(name, SERVICE_QUERY_STATUS);
  if (!service.get()) return info;
  SERVICE_STATUS status{};
  if (!QueryServiceStatus(service.get(), &status)) return info;
  info.exists = true;
  info.status = StatusName(status.dwCurrentState);
  info.can_stop = (status.dwControlsAccepted & SERVICE_ACCEPT_STOP) != 0;
  info.name = name;
  info.display_name = name;
  wchar_t display[512];
  wchar_t key[512];
  DWORD size = 512;
  if (GetServiceDisplayNameW(service.manager(), Widen(name).c_str(), display, &size)) {
    info.display_name = Utf8FromWide(display);
    size = 512;
    if (GetServiceKeyNameW(service.manager(), display, key, &size)) info.name = Utf8FromWide(key);
  }
  return info;
}

namespace {

// What a service depends on: its DependOnService registry value (REG_MULTI_SZ), where the
// service control manager keeps it (wine 8's QueryServiceConfigW reports no dependencies).
std::vector<std::string> Dependencies(const std::wstring& service) {
  std::vector<std::string> names;
  HKEY key = nullptr;
  const std::wstring path = L"SYSTEM\\CurrentControlSet\\Services\\" + service;
  if (RegOpenKeyExW(HKEY_LOCAL_MACHINE, path.c_str(), 0, KEY_READ, &key) != ERROR_SUCCESS) {
    return names;
  }
  DWORD type = 0;
  DWORD size = 0;
  if (RegQueryValueExW(key, L"DependOnService", nullptr, &type, nullptr, &size) == ERROR_SUCCESS &&
      type == REG_MULTI_SZ && size > 0) {
    std::vector<wchar_t> data(size / sizeof(wchar_t) + 2, L'\0');
    if (RegQueryValueExW(key, L"DependOnService", nullptr, &type,
                         reinterpret_cast<BYTE*>(data.data()), &size) == ERROR_SUCCESS) {
      std::wstring name;
      for (std::size_t i = 0; i < size / sizeof(wchar_t); ++i) {
        if (data[i] != L'\0') {
          name += data[i];
          continue;
        }
        if (name.empty()) break;
        if (name[0] != SC_GROUP_IDENTIFIERW) names.push_back(Utf8FromWide(name.c_str()));
        name.clear();
      }
      if (!name.empty() && name[0] != SC_GROUP_IDENTIFIERW) {
        names.push_back(Utf8FromWide(name.c_str()));
      }
    }
  }
  RegCloseKey(key);
  return names;
}

// Every service with what it depends on.
std::vector<std::pair<std::string, std::vector<std::string>>> AllDependencies() {
  std::vector<std::pair<std::string, std::vector<std::string>>> all;
  const SC_HANDLE manager = OpenSCManagerW(nullptr, nullptr, SC_MANAGER_ENUMERATE_SERVICE);
  if (!manager) return all;
  DWORD needed = 0;
  DWORD count = 0;
  DWORD resume = 0;
  EnumServicesStatusExW(manager, SC_ENUM_PROCESS_INFO, SERVICE_WIN32, SERVICE_STATE_ALL, nullptr, 0,
                        &needed, &count, &resume, nullptr);
  std::vector<BYTE> buffer(needed + 1024);
  resume = 0;
  if (EnumServicesStatusExW(manager, SC_ENUM_PROCESS_INFO, SERVICE_WIN32, SERVICE_STATE_ALL,
                            buffer.data(), static_cast<DWORD>(buffer.size()), &needed, &count,
                            &resume, nullptr)) {
    const auto* entries = reinterpret_cast<const ENUM_SERVICE_STATUS_PROCESSW*>(buffer.data());
    for (DWORD i = 0; i < count; ++i) {
      all.emplace_back(Utf8FromWide(entries[i].lpServiceName),
                       Dependencies(entries[i].lpServiceName));
    }
  }
  CloseServiceHandle(manager);
  return all;
}

}  // namespace

std::vector<std::string> WindowsHost::DependentServices(const std::string& name) {
  // EnumDependentServices (direct and indirect dependents), computed from every service's
  // configuration: wine 8's EnumDependentServicesW is a stub that returns none.
  const auto all = AllDependencies();
  std::vector<std::string> dependents;
  std::vector<std::string> pending = {name};
  while (!pending.empty()) {
    const std::string current = pending.back();
    pending.pop_back();
    for (const auto& [service, dependencies] : all) {
      bool depends = false;
      for (const auto& dependency : dependencies)
        depends = depends || EqualsNoCase(dependency, current);
      bool known = false;
      for (const auto& seen : dependents) known = known || EqualsNoCase(seen, service);
      if (depends && !known) {
        dependents.push_back(service);
        pending.push_back(service);
      }
    }
  }
  return dependents;
}

std::uint32_t WindowsHost::StartNamedService(const std::string& name) {
  // Windows' service control manager starts a service's dependencies first and fails the start
  // with ERROR_SERVICE_DEPENDENCY_FAIL when one does not run; wine 8's does not, so it is done
  // here, for this stand-in's Start-Service and Restart-Service only.
  for (const auto& [service, dependencies] : AllDependencies()) {
    if (!EqualsNoCase(service, name)) continue;
    for (const auto& dependency : dependencies) {
      // Names of no service are left alone: wine 8's sc.exe writes `depend= A` with junk after
      // A's name (its string not double-NUL-terminated), which its own manager ignores too.
      const ServiceInfo info = QueryService(dependency);
      if (!info.exists || info.status == "Running") continue;
      const std::uint32_t error = StartNamedService(dependency);
      if (error != 0 && error != ERROR_SERVICE_ALREADY_RUNNING)
        return ERROR_SERVICE_DEPENDENCY_FAIL;
      for (int polls = 0; QueryService(dependency).status != "Running"; ++polls) {
        if (polls >= 120 || QueryService(dependency).status == "Stopped") {
          return ERROR_SERVICE_DEPENDENCY_FAIL;
        }
        ::Sleep(250);
      }
    }
  }
  const ServiceHandle service(name, SERVICE_START);
  if (!service.get()) return service.error();
  return StartServiceW(service.get(), 0, nullptr) ? 0 : GetLastError();
}

std::uint32_t WindowsHost::StopNamedService(const std::string& name) {
  const ServiceHandle service(name, SERVICE_STOP);
  if (!service.get()) return service.error();
  SERVICE_STATUS status{};
  return ControlService(service.get(), SERVICE_CONTROL_STOP, &status) ? 0 : GetLastError();
}

}  // namespace dxshim::test::node_standin::powershell
