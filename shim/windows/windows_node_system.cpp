#include "shim/windows/windows_node_system.h"

// clang-format off
#include <winsock2.h>  // before windows.h
#include <ws2tcpip.h>
#include <windows.h>
#include <tlhelp32.h>
#include <winternl.h>
#include <aclapi.h>
#include <sddl.h>
// clang-format on

#include <algorithm>
#include <thread>

#include "devices/windows/wide_text.h"

namespace dxshim::windows {
namespace {

using devices::windows::Narrow;
using devices::windows::Surrogates;
using devices::windows::Utf8FromWide;
using devices::windows::Widen;
using install::NodeError;
using std::chrono::milliseconds;

std::string ErrorText(DWORD code) { return "Windows error " + std::to_string(code); }
std::string ErrorText(LSTATUS code) { return "Windows error " + std::to_string(code); }

// A value the installer reads, and may write back, as UTF-8: UTF-16 with no UTF-8 form (an
// unpaired surrogate) is a NodeError naming it (`what`), never a copy with a character replaced.
std::string Exact(const wchar_t* text, const std::string& what) {
  try {
    return Utf8FromWide(text);
  } catch (const devices::windows::Utf16Error& e) {
    throw NodeError(what + " " + e.what());
  }
}

class ServiceHandle {
 public:
  explicit ServiceHandle(SC_HANDLE handle = nullptr) : handle_(handle) {}
  ~ServiceHandle() {
    if (handle_) CloseServiceHandle(handle_);
  }
  ServiceHandle(const ServiceHandle&) = delete;
  ServiceHandle& operator=(const ServiceHandle&) = delete;
  ServiceHandle(ServiceHandle&& other) noexcept : handle_(other.handle_) {
    other.handle_ = nullptr;
  }
  ServiceHandle& operator=(ServiceHandle&&) = delete;
  SC_HANDLE get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  SC_HANDLE handle_;
};

ServiceHandle Manager(DWORD access) {
  ServiceHandle manager(OpenSCManagerW(nullptr, nullptr, access));
  if (!manager)
    throw NodeError("cannot open the service control manager (" + ErrorText(GetLastError()) + ")");
  return manager;
}

// REG_MULTI_SZ-style list: each name NUL-terminated, then one more NUL.
std::wstring MultiString(const std::vector<std::string>& names) {
  std::wstring out;
  for (const auto& name : names) out += Widen(name) + L'\0';
  return out + L'\0';
}

struct ServiceConfig {
  std::string command_line;
  std::vector<std::string> services;  // dependencies on services
  std::vector<std::string> groups;    // dependencies on groups, "+name"
};

// A REG_MULTI_SZ value under HKLM; empty when it is missing.
std::vector<std::string> RegistryList(const std::string& key, const wchar_t* name) {
  DWORD size = 0;
  const std::wstring wkey = devices::windows::Widen(key);
  if (RegGetValueW(HKEY_LOCAL_MACHINE, wkey.c_str(), name, RRF_RT_REG_MULTI_SZ, nullptr, nullptr,
                   &size) != ERROR_SUCCESS) {
    return {};
  }
  std::vector<wchar_t> data(size / sizeof(wchar_t) + 2, L'\0');
  DWORD bytes = static_cast<DWORD>(data.size() * sizeof(wchar_t));
  if (RegGetValueW(HKEY_LOCAL_MACHINE, wkey.c_str(), name, RRF_RT_REG_MULTI_SZ, nullptr,
                   data.data(), &bytes) != ERROR_SUCCESS) {
    return {};
  }
  std::vector<std::string> out;
  for (const wchar_t* p = data.data(); *p; p += wcslen(p) + 1) {
    out.push_back(
        Exact(p, "an entry of HKLM\\" + key + "\\" + Utf8FromWide(name, Surrogates::kShow)));
  }
  return out;
}

ServiceConfig QueryConfig(SC_HANDLE service, const std::string& name) {
  DWORD needed = 0;
  QueryServiceConfigW(service, nullptr, 0, &needed);
  std::vector<unsigned char> buffer(needed + 16);
  auto* config = reinterpret_cast<QUERY_SERVICE_CONFIGW*>(buffer.data());
  if (!QueryServiceConfigW(service, config, static_cast<DWORD>(buffer.size()), &needed)) {
    throw NodeError("cannot read service " + name + "'s configuration (" +
                    ErrorText(GetLastError()) + ")");
  }
  ServiceConfig out;
  out.command_line = config->lpBinaryPathName
                         ? Exact(config->lpBinaryPathName, "service " + name + "'s command line")
                         : "";
  // The dependencies as the service manager keeps them in the service's key (DependOnService,
  // DependOnGroup): wine 8's QueryServiceConfigW returns an empty list.
  const std::string key = "SYSTEM\\CurrentControlSet\\Services\\" + name;
  out.services = RegistryList(key, L"DependOnService");
  for (const auto& group : RegistryList(key, L"DependOnGroup")) out.groups.push_back("+" + group);
  return out;
}

SERVICE_STATUS_PROCESS QueryStatus(SC_HANDLE service, const std::string& name) {
  SERVICE_STATUS_PROCESS status{};
  DWORD needed = 0;
  if (!QueryServiceStatusEx(service, SC_STATUS_PROCESS_INFO, reinterpret_cast<BYTE*>(&status),
                            sizeof status, &needed)) {
    throw NodeError("cannot read service " + name + "'s status (" + ErrorText(GetLastError()) +
                    ")");
  }
  return status;
}

// Changes what is given, and passes the service's whole dependency list every time (wine's
// service manager clears the dependencies on a NULL list, where Windows keeps them).
void ChangeConfig(SC_HANDLE service, const std::string& name, const wchar_t* command_line,
                  const std::vector<std::string>& dependencies) {
  const std::wstring list = MultiString(dependencies);
  if (!ChangeServiceConfigW(service, SERVICE_NO_CHANGE, SERVICE_NO_CHANGE, SERVICE_NO_CHANGE,
                            command_line, nullptr, nullptr, list.c_str(), nullptr, nullptr,
                            nullptr)) {
    throw NodeError("cannot change service " + name + " (" + ErrorText(GetLastError()) + ")");
  }
}

// A process's command line from its PEB (same bitness; ReadProcessMemory).
std::string CommandLineOf(DWORD pid) {
  const HANDLE process = OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, FALSE, pid);
  if (!process) return "";
  std::string out;
  PROCESS_BASIC_INFORMATION basic{};
  ULONG length = 0;
  if (NtQueryInformationProcess(process, ProcessBasicInformation, &basic, sizeof basic, &length) ==
          0 &&
      basic.PebBaseAddress) {
    PEB peb{};
    RTL_USER_PROCESS_PARAMETERS parameters{};
    SIZE_T read = 0;
    if (ReadProcessMemory(process, basic.PebBaseAddress, &peb, sizeof peb, &read) &&
        peb.ProcessParameters &&
        ReadProcessMemory(process, peb.ProcessParameters, &parameters, sizeof parameters, &read) &&
        parameters.CommandLine.Buffer && parameters.CommandLine.Length > 0) {
      std::wstring text(parameters.CommandLine.Length / sizeof(wchar_t), L'\0');
      if (ReadProcessMemory(process, parameters.CommandLine.Buffer, text.data(),
                            parameters.CommandLine.Length, &read)) {
        out = Narrow(text.data(), text.size(), Surrogates::kShow);  // only matched and shown
      }
    }
  }
  CloseHandle(process);
  return out;
}

class WindowsNodeSystem : public install::NodeSystem {
 public:
  WindowsNodeSystem() {
    WSADATA data;
    winsock_ = WSAStartup(MAKEWORD(2, 2), &data) == 0;
  }
  ~WindowsNodeSystem() override {
    if (winsock_) WSACleanup();
  }
  WindowsNodeSystem(const WindowsNodeSystem&) = delete;
  WindowsNodeSystem& operator=(const WindowsNodeSystem&) = delete;

  std::optional<install::RegistryString> ReadRegistry(const std::string& key,
                                                      const std::string& name) override {
    DWORD type = 0;
    DWORD size = 0;
    const std::wstring wkey = Widen(key);
    const std::wstring wname = Widen(name);
    LSTATUS status = RegGetValueW(HKEY_LOCAL_MACHINE, wkey.c_str(), wname.c_str(),
                                  RRF_RT_ANY | RRF_NOEXPAND, &type, nullptr, &size);
    if (status == ERROR_FILE_NOT_FOUND || status == ERROR_PATH_NOT_FOUND) return std::nullopt;
    if (status != ERROR_SUCCESS) {
      throw NodeError("cannot read HKLM\\" + key + "\\" + name + " (" + ErrorText(status) + ")");
    }
    if (type != REG_SZ && type != REG_EXPAND_SZ) {
      throw NodeError("HKLM\\" + key + "\\" + name + " is not a string value (type " +
                      std::to_string(type) + ")");
    }
    std::vector<wchar_t> data(size / sizeof(wchar_t) + 2, L'\0');
    DWORD bytes = static_cast<DWORD>(data.size() * sizeof(wchar_t));
    status = RegGetValueW(HKEY_LOCAL_MACHINE, wkey.c_str(), wname.c_str(),
                          RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ | RRF_NOEXPAND, &type, data.data(),
                          &bytes);
    if (status != ERROR_SUCCESS) {
      throw NodeError("cannot read HKLM\\" + key + "\\" + name + " (" + ErrorText(status) + ")");
    }
    return install::RegistryString{Exact(data.data(), "HKLM\\" + key + "\\" + name),
                                   type == REG_EXPAND_SZ};
  }

  void WriteRegistry(const std::string& key, const std::string& name,
                     const install::RegistryString& value) override {
    const std::wstring data = Widen(value.data);
    const LSTATUS status =
        RegSetKeyValueW(HKEY_LOCAL_MACHINE, Widen(key).c_str(), Widen(name).c_str(),
                        value.expand ? REG_EXPAND_SZ : REG_SZ, data.c_str(),
                        static_cast<DWORD>((data.size() + 1) * sizeof(wchar_t)));
    if (status != ERROR_SUCCESS) {
      throw NodeError("cannot write HKLM\\" + key + "\\" + name + " (" + ErrorText(status) + ")");
    }
  }

  std::optional<std::string> ReadFile(const std::string& path) override {
    const HANDLE file =
        CreateFileW(Widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                    OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) {
      const DWORD error = GetLastError();
      if (error == ERROR_FILE_NOT_FOUND || error == ERROR_PATH_NOT_FOUND) return std::nullopt;
      throw NodeError("cannot read " + path + " (" + ErrorText(error) + ")");
    }
    std::string bytes;
    char buffer[65536];
    DWORD n = 0;
    bool ok = true;
    while ((ok = ::ReadFile(file, buffer, sizeof buffer, &n, nullptr) != FALSE) && n > 0) {
      bytes.append(buffer, n);
    }
    const DWORD error = GetLastError();
    CloseHandle(file);
    if (!ok) throw NodeError("cannot read " + path + " (" + ErrorText(error) + ")");
    return bytes;
  }

  void WriteFile(const std::string& path, const std::string& bytes) override {
    const std::wstring target = Widen(path);
    CreateParentFolders(target);
    const std::wstring temporary = target + L".dxshim-new";
    const HANDLE file = CreateFileW(temporary.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                                    FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) {
      throw NodeError("cannot write " + path + ".dxshim-new (" + ErrorText(GetLastError()) + ")");
    }
    DWORD written = 0;
    const bool ok = ::WriteFile(file, bytes.data(), static_cast<DWORD>(bytes.size()), &written,
                                nullptr) != FALSE &&
                    written == bytes.size() && FlushFileBuffers(file) != FALSE;
    const DWORD error = GetLastError();
    CloseHandle(file);
    if (!ok || !MoveFileExW(temporary.c_str(), target.c_str(),
                            MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
      const DWORD move_error = ok ? GetLastError() : error;
      DeleteFileW(temporary.c_str());
      throw NodeError("cannot write " + path + " (" + ErrorText(move_error) + ")");
    }
  }

  void RemoveFile(const std::string& path) override {
    if (!DeleteFileW(Widen(path).c_str())) {
      const DWORD error = GetLastError();
      if (error != ERROR_FILE_NOT_FOUND && error != ERROR_PATH_NOT_FOUND) {
        throw NodeError("cannot remove " + path + " (" + ErrorText(error) + ")");
      }
    }
  }

  std::string UntrustedOwner(const std::string& path) override {
    PSID owner = nullptr;
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    const DWORD status =
        GetNamedSecurityInfoW(Widen(path).c_str(), SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION,
                              &owner, nullptr, nullptr, nullptr, &descriptor);
    if (status != ERROR_SUCCESS)
      return "of an owner that cannot be read (" + ErrorText(status) + ")";
    std::string why;
    if (!IsWellKnownSid(owner, WinLocalSystemSid) &&
        !IsWellKnownSid(owner, WinBuiltinAdministratorsSid) && !IsOwnUser(owner)) {
      wchar_t* text = nullptr;
      why = "owned by " +
            (ConvertSidToStringSidW(owner, &text) ? Utf8FromWide(text, Surrogates::kShow) : "?");
      if (text) LocalFree(text);
    }
    LocalFree(descriptor);
    return why;
  }

  std::vector<std::string> ListFiles(const std::string& folder) override {
    std::vector<std::string> names;
    WIN32_FIND_DATAW found;
    const HANDLE find = FindFirstFileW(Widen(folder + "\\*").c_str(), &found);
    if (find == INVALID_HANDLE_VALUE) return names;
    do {
      if (!(found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
        names.push_back(Exact(found.cFileName, "a file name in " + folder));
      }
    } while (FindNextFileW(find, &found));
    FindClose(find);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::optional<install::ServiceState> Service(const std::string& name) override {
    const auto manager = Manager(SC_MANAGER_CONNECT);
    const ServiceHandle service(OpenServiceW(manager.get(), Widen(name).c_str(),
                                             SERVICE_QUERY_CONFIG | SERVICE_QUERY_STATUS));
    if (!service) {
      if (GetLastError() == ERROR_SERVICE_DOES_NOT_EXIST) return std::nullopt;
      throw NodeError("cannot open service " + name + " (" + ErrorText(GetLastError()) + ")");
    }
    const auto config = QueryConfig(service.get(), name);
    const auto status = QueryStatus(service.get(), name);
    install::ServiceState state;
    state.command_line = config.command_line;
    state.dependencies = config.services;
    state.running = status.dwCurrentState == SERVICE_RUNNING;
    state.pid = status.dwCurrentState == SERVICE_STOPPED ? 0 : status.dwProcessId;
    return state;
  }

  void RegisterService(const install::ServiceSpec& spec) override {
    const auto manager = Manager(SC_MANAGER_CREATE_SERVICE);
    const std::wstring dependencies = MultiString(spec.dependencies);
    const ServiceHandle service(
        CreateServiceW(manager.get(), Widen(spec.name).c_str(), Widen(spec.display_name).c_str(),
                       SERVICE_ALL_ACCESS, SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START,
                       SERVICE_ERROR_NORMAL, Widen(spec.command_line).c_str(), nullptr, nullptr,
                       dependencies.c_str(), nullptr, nullptr));
    if (!service) {
      throw NodeError("cannot create service " + spec.name + " (" + ErrorText(GetLastError()) +
                      ")");
    }
    // Restarted by the service manager when it fails: 2 s, 2 s, then 10 s; counts reset after 60 s.
    SC_ACTION actions[] = {
        {SC_ACTION_RESTART, 2000}, {SC_ACTION_RESTART, 2000}, {SC_ACTION_RESTART, 10000}};
    SERVICE_FAILURE_ACTIONSW failure{};
    failure.dwResetPeriod = 60;
    failure.cActions = 3;
    failure.lpsaActions = actions;
    if (!ChangeServiceConfig2W(service.get(), SERVICE_CONFIG_FAILURE_ACTIONS, &failure)) {
      throw NodeError("cannot set service " + spec.name + "'s restart on failure (" +
                      ErrorText(GetLastError()) + ")");
    }
  }

  // Returns once the service is gone. DeleteService only marks it: the manager removes it when
  // its process has ended and no handle to it is open, and until then a new install could not
  // create it again (ERROR_SERVICE_MARKED_FOR_DELETE).
  void UnregisterService(const std::string& name) override {
    const auto manager = Manager(SC_MANAGER_CONNECT);
    {
      const ServiceHandle service(OpenServiceW(manager.get(), Widen(name).c_str(), DELETE));
      if (!service || !::DeleteService(service.get())) {
        throw NodeError("cannot delete service " + name + " (" + ErrorText(GetLastError()) + ")");
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      const ServiceHandle still(
          OpenServiceW(manager.get(), Widen(name).c_str(), SERVICE_QUERY_STATUS));
      if (!still && GetLastError() == ERROR_SERVICE_DOES_NOT_EXIST) return;
      if (std::chrono::steady_clock::now() >= deadline) {
        throw NodeError("service " + name +
                        " is marked for deletion but still there after 60 s: a program holds a "
                        "handle to it (close the Services console)");
      }
      ::Sleep(200);
    }
  }

  void SetServiceCommandLine(const std::string& name, const std::string& command_line) override {
    const auto manager = Manager(SC_MANAGER_CONNECT);
    const ServiceHandle service = Open(manager, name, SERVICE_CHANGE_CONFIG | SERVICE_QUERY_CONFIG);
    auto config = QueryConfig(service.get(), name);
    auto all = config.services;
    all.insert(all.end(), config.groups.begin(), config.groups.end());
    ChangeConfig(service.get(), name, Widen(command_line).c_str(), all);
  }

  void SetServiceDependencies(const std::string& name,
                              const std::vector<std::string>& dependencies) override {
    const auto manager = Manager(SC_MANAGER_CONNECT);
    const ServiceHandle service = Open(manager, name, SERVICE_CHANGE_CONFIG | SERVICE_QUERY_CONFIG);
    auto all = dependencies;
    const auto config = QueryConfig(service.get(), name);
    all.insert(all.end(), config.groups.begin(), config.groups.end());  // groups are kept
    ChangeConfig(service.get(), name, nullptr, all);
  }

  void StartAndWait(const std::string& name, milliseconds timeout) override {
    const auto manager = Manager(SC_MANAGER_CONNECT);
    const ServiceHandle service = Open(manager, name, SERVICE_START | SERVICE_QUERY_STATUS);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // Right after a stop, or while wine's manager starts its own services, a start may be refused
    // for a moment.
    while (!::StartServiceW(service.get(), 0, nullptr)) {
      const DWORD error = GetLastError();
      if (error == ERROR_SERVICE_ALREADY_RUNNING) break;
      if ((error != ERROR_SERVICE_DATABASE_LOCKED && error != ERROR_SERVICE_CANNOT_ACCEPT_CTRL &&
           error != ERROR_SERVICE_MARKED_FOR_DELETE) ||
          std::chrono::steady_clock::now() >= deadline) {
        throw NodeError("cannot start service " + name + " (" + ErrorText(error) + ")");
      }
      ::Sleep(250);
    }
    WaitFor(service.get(), name, SERVICE_RUNNING, deadline);
  }

  void RequestStart(const std::string& name) override {
    const auto manager = Manager(SC_MANAGER_CONNECT);
    const ServiceHandle service = Open(manager, name, SERVICE_START | SERVICE_QUERY_STATUS);
    if (!::StartServiceW(service.get(), 0, nullptr) &&
        GetLastError() != ERROR_SERVICE_ALREADY_RUNNING) {
      throw NodeError("cannot start service " + name + " (" + ErrorText(GetLastError()) + ")");
    }
  }

  void StopAndWait(const std::string& name, milliseconds timeout) override {
    const auto manager = Manager(SC_MANAGER_CONNECT);
    const ServiceHandle service = Open(manager, name, SERVICE_STOP | SERVICE_QUERY_STATUS);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (QueryStatus(service.get(), name).dwCurrentState == SERVICE_STOPPED) return;
    SERVICE_STATUS status{};
    while (!ControlService(service.get(), SERVICE_CONTROL_STOP, &status)) {
      const DWORD error = GetLastError();
      if (error == ERROR_SERVICE_NOT_ACTIVE) return;
      if (error != ERROR_SERVICE_CANNOT_ACCEPT_CTRL ||
          std::chrono::steady_clock::now() >= deadline) {
        throw NodeError("cannot stop service " + name + " (" + ErrorText(error) +
                        (error == ERROR_DEPENDENT_SERVICES_RUNNING
                             ? ": services that depend on it are running"
                             : "") +
                        ")");
      }
      ::Sleep(250);
    }
    WaitFor(service.get(), name, SERVICE_STOPPED, deadline);
  }

  std::vector<install::ProcessInfo> Processes() override {
    std::vector<install::ProcessInfo> out;
    const HANDLE snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
    if (snapshot == INVALID_HANDLE_VALUE) {
      throw NodeError("cannot list the processes (" + ErrorText(GetLastError()) + ")");
    }
    PROCESSENTRY32W entry{};
    entry.dwSize = sizeof entry;
    for (bool more = Process32FirstW(snapshot, &entry); more;
         more = Process32NextW(snapshot, &entry)) {
      install::ProcessInfo process;
      process.pid = entry.th32ProcessID;
      process.program = Utf8FromWide(entry.szExeFile, Surrogates::kShow);  // matched, shown
      process.command_line = CommandLineOf(entry.th32ProcessID);
      out.push_back(std::move(process));
    }
    CloseHandle(snapshot);
    return out;
  }

  std::optional<std::uint32_t> PipeServer(const std::string& pipe_path) override {
    const std::wstring path = Widen(pipe_path);
    for (int attempt = 0; attempt < 20; ++attempt) {
      // Identification only: an impostor serving the pipe cannot act as this process.
      const HANDLE pipe =
          CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                      SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
      if (pipe != INVALID_HANDLE_VALUE) {
        ULONG pid = 0;
        const bool ok = GetNamedPipeServerProcessId(pipe, &pid) != FALSE;
        CloseHandle(pipe);
        return ok ? std::optional<std::uint32_t>(pid) : std::nullopt;
      }
      if (GetLastError() != ERROR_PIPE_BUSY) return std::nullopt;
      WaitNamedPipeW(path.c_str(), 250);
    }
    return std::nullopt;
  }

  void Sleep(milliseconds duration) override { std::this_thread::sleep_for(duration); }

  std::int64_t NowUnixMs() override {
    return std::chrono::duration_cast<milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  std::string ExpandEnvironment(const std::string& text) override {
    const std::wstring in = Widen(text);
    const DWORD needed = ExpandEnvironmentStringsW(in.c_str(), nullptr, 0);
    if (needed == 0) return text;
    std::wstring out(needed, L'\0');
    ExpandEnvironmentStringsW(in.c_str(), out.data(), needed);
    return Exact(out.c_str(), "'" + text + "' expanded");
  }

 private:
  // Whether `sid` is the user this process runs as (who wrote the record itself).
  static bool IsOwnUser(PSID sid) {
    HANDLE token = nullptr;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return false;
    DWORD size = 0;
    GetTokenInformation(token, TokenUser, nullptr, 0, &size);
    std::vector<unsigned char> buffer(size);
    bool same = false;
    if (GetTokenInformation(token, TokenUser, buffer.data(), size, &size)) {
      same = EqualSid(reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid, sid) != FALSE;
    }
    CloseHandle(token);
    return same;
  }

  // The folders above `path` that do not exist yet (rke2's config.yaml.d for dxshim's drop-in),
  // made with the access their parents give.
  static void CreateParentFolders(const std::wstring& path) {
    for (auto at = path.find_first_of(L"\\/", 3); at != std::wstring::npos;
         at = path.find_first_of(L"\\/", at + 1)) {
      CreateDirectoryW(path.substr(0, at).c_str(), nullptr);  // an existing one fails: fine
    }
  }

  static ServiceHandle Open(const ServiceHandle& manager, const std::string& name, DWORD access) {
    ServiceHandle service(OpenServiceW(manager.get(), Widen(name).c_str(), access));
    if (!service)
      throw NodeError("cannot open service " + name + " (" + ErrorText(GetLastError()) + ")");
    return service;
  }

  static void WaitFor(SC_HANDLE service, const std::string& name, DWORD state,
                      std::chrono::steady_clock::time_point deadline) {
    while (true) {
      const auto status = QueryStatus(service, name);
      if (status.dwCurrentState == state) return;
      if (state == SERVICE_RUNNING && status.dwCurrentState == SERVICE_STOPPED) {
        throw NodeError("service " + name + " stopped while starting (exit code " +
                        std::to_string(status.dwWin32ExitCode == ERROR_SERVICE_SPECIFIC_ERROR
                                           ? status.dwServiceSpecificExitCode
                                           : status.dwWin32ExitCode) +
                        ")");
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        throw NodeError("service " + name + " did not reach the " +
                        (state == SERVICE_RUNNING ? "running" : "stopped") + " state in time");
      }
      ::Sleep(200);
    }
  }

  bool winsock_ = false;
};

}  // namespace

std::unique_ptr<install::NodeSystem> MakeWindowsNodeSystem() {
  return std::make_unique<WindowsNodeSystem>();
}

}  // namespace dxshim::windows
