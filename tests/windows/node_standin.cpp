// TEST STAND-INS (mocks) for the programs that launch and serve kubelet on a Windows node. None of
// them can exist under wine here (no kubelet, no NSSM, no PowerShell, no containerd for Windows,
// no rke2, no EKS service host), so this one program behaves like each of them as far as
// `dxshim.exe install` can observe: the service control manager's states, the processes and their
// command lines, kubelet's healthz port, the named pipes and who connects to them. It is NOT any
// of those programs; it implements nothing of kubelet, NSSM, containerd, rke2 or EKS's service
// host beyond what is described here.
//
// What it is follows from its own file name (the tests copy it under each name):
//   kubelet.exe     appends `start <pid> <command line>` to starts.log next to the executable;
//                   serves HTTP on --healthz-bind-address (127.0.0.1) : --healthz-port (10248;
//                   0 serves none): `GET /healthz` answers 200 `ok`, anything else 404; opens
//                   the pipe of --container-runtime-endpoint (npipe://./pipe/NAME or
//                   npipe:////./pipe/NAME; tcp://HOST:PORT connects) as a client every second and
//                   closes it again, as kubelet's CRI client reconnecting would. Ready once the
//                   port listens; a port it cannot bind ends it with exit code 3 (1: a flag value
//                   it cannot use). Every other flag (--config=PATH too) is accepted and ignored.
//   nssm.exe        a service only, as NSSM 2.24 (its ImagePath is nssm.exe alone): at every start
//                   reads HKLM\SYSTEM\CurrentControlSet\Services\<its service name>\Parameters
//                   (Application, AppParameters, AppDirectory; REG_EXPAND_SZ expanded) and starts
//                   `"<Application>" <AppParameters>` in AppDirectory (if empty: Application's
//                   folder when it exists). Application powershell.exe or pwsh.exe is emulated
//                   (see EmulatedPowerShell below): the script's kubelet.exe command becomes
//                   `"<nssm.exe's folder>\kubelet.exe" <flags>`. Appends
//                   `start <child pid> <child command line>` to nssm-starts.log next to nssm.exe
//                   (`error <why>` when it cannot start one: service-specific exit code 2), is
//                   RUNNING once the child runs; STOP terminates the child; a child that ends by
//                   itself ends the service with the child's exit code as its service-specific
//                   exit code (real NSSM would restart it: its default AppExit action).
//   containerd.exe  appends `start <pid> <command line>` to starts.log next to the executable;
//                   serves the pipe named by the `address` of the top-level [grpc] table of
//                   --config PATH (default %ProgramFiles%\containerd\config.toml; an unreadable
//                   --config file is exit code 1, a missing default one means the default
//                   pipe \\.\pipe\containerd-containerd): always one instance listening, each
//                   client accepted, its process id appended as `connect <pid>` to
//                   connections.log next to the executable, then disconnected. Ready once the
//                   first instance exists; a pipe name another process serves is exit code 4.
//   rke2.exe        as the rke2 service runs kubelet and containerd: at every start reads the
//                   `kubelet-arg` items of --config PATH (-c; default
//                   %SystemDrive%\etc\rancher\rke2\config.yaml; absent: no items) with a small
//                   line reader (KubeletArgItems: a block list, a flow list or one string) and
//                   starts two children from its own folder: `containerd.exe --config
//                   <folder>\containerd.toml` (without --config when that file is absent: the
//                   default pipe) and `kubelet.exe --container-runtime-endpoint=
//                   npipe:////./pipe/containerd-containerd --name=value...`, one --name=value per
//                   item, an item naming a default replacing it (k3s GetArgs). Appends
//                   `start <kubelet's pid> <kubelet's command line>` to rke2-starts.log next to
//                   rke2.exe (`error <why>` when a child cannot start, service-specific exit code
//                   2, or ends by itself: then the other is ended and its exit code is the
//                   service's), is RUNNING once both run; STOP ends both and waits for them.
//   EKS-WindowsServiceHost.exe
//                   as EKS's service host: its command line is `EKS-WindowsServiceHost.exe
//                   <service> <program> <args...>`; starts the rest of that line, verbatim from
//                   <program> on, as its child, appends `start <pid> <child command line>` to
//                   servicehost-starts.log next to itself, is RUNNING once the child runs; STOP
//                   ends the child; a child that ends by itself ends the service with its exit
//                   code (no program: `error <why>`, exit code 2).
//   any name        `--probe-pipe NAME` (NAME: a pipe name, \\.\pipe\NAME or an npipe:// URL)
//                   opens the pipe as a client: exit code 0 and `served by process <pid>` if it
//                   could, 1 if not.
//
// Started by the service control manager (its parent is services.exe) it runs as a
// SERVICE_WIN32_OWN_PROCESS service: START_PENDING, RUNNING once ready, STOP_PENDING and STOPPED
// on STOP or SHUTDOWN, a non-zero exit code as the service-specific one. Started any other way (a
// console, or as another program's child, such as NSSM's) it runs in the foreground until killed
// or Ctrl-C. A child is never offered to the service dispatcher: under wine the dispatcher would
// connect to the control pipe of the service started last (another process's) instead of failing.
// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
#include <ws2tcpip.h>
#include <shellapi.h>
#include <tlhelp32.h>
// clang-format on

#include <atomic>
#include <cstdio>
#include <cwctype>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "devices/windows/wide_text.h"

namespace {

using dxshim::devices::windows::Narrow;
using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

// ---- Text, files, command lines.

std::wstring Lower(std::wstring text) {
  for (auto& c : text) c = static_cast<wchar_t>(std::towlower(static_cast<wint_t>(c)));
  return text;
}

bool EndsWithNoCase(const std::wstring& text, const std::wstring& suffix) {
  return text.size() >= suffix.size() &&
         Lower(text.substr(text.size() - suffix.size())) == Lower(suffix);
}

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

std::wstring ExpandEnvironment(const std::wstring& text) {
  const DWORD size = ExpandEnvironmentStringsW(text.c_str(), nullptr, 0);
  if (size == 0) return text;
  std::wstring out(size, L'\0');
  const DWORD n = ExpandEnvironmentStringsW(text.c_str(), out.data(), size);
  if (n == 0 || n > size) return text;
  out.resize(n - 1);  // n counts the terminating NUL
  return out;
}

// One line added to FILE: opened, appended and closed each time, shared so that tests (and other
// stand-ins) can read and write it meanwhile.
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

// A text file's contents as UTF-8 (a UTF-16LE file, as PowerShell 5 writes them, converted; a
// UTF-8 byte order mark dropped), or nothing if it cannot be read.
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

// A command line split as CommandLineToArgvW does (argv[0] by its program-name rule).
std::vector<std::wstring> SplitCommandLine(const std::wstring& line) {
  std::vector<std::wstring> out;
  int argc = 0;
  LPWSTR* argv = CommandLineToArgvW(line.c_str(), &argc);
  if (!argv) return out;
  for (int i = 0; i < argc; ++i) out.emplace_back(argv[i]);
  LocalFree(argv);
  return out;
}

// Parameters (no program name) split by the rules for every argument after the first.
std::vector<std::wstring> SplitParameters(const std::wstring& parameters) {
  auto out = SplitCommandLine(L"x " + parameters);
  if (!out.empty()) out.erase(out.begin());
  return out;
}

// The value of a flag spelled any of SPELLINGS (`--name=value` or `--name value`), the last one
// given winning, as kubelet's flag parser and containerd's do.
std::optional<std::wstring> FlagValue(const std::vector<std::wstring>& args,
                                      const std::vector<std::wstring>& spellings) {
  std::optional<std::wstring> value;
  for (std::size_t i = 1; i < args.size(); ++i) {
    for (const auto& flag : spellings) {
      if (args[i].rfind(flag + L"=", 0) == 0) {
        value = args[i].substr(flag.size() + 1);
      } else if (args[i] == flag && i + 1 < args.size()) {
        value = args[++i];
      }
    }
  }
  return value;
}

// kubelet's parseEndpoint (pkg/kubelet/util/util_windows.go): backslashes become slashes, then
// npipe://HOST/PATH names //HOST/PATH (HOST "." when empty) and a PATH already starting with
// //./pipe is taken as it is. Returned with backslashes: \\.\pipe\NAME.
std::optional<std::wstring> PipePathOfEndpoint(std::wstring endpoint) {
  for (auto& c : endpoint) c = c == L'\\' ? L'/' : c;
  const std::wstring scheme = L"npipe://";
  if (Lower(endpoint.substr(0, scheme.size())) != scheme) return std::nullopt;
  const std::wstring rest = endpoint.substr(scheme.size());
  const auto slash = rest.find(L'/');
  const std::wstring host = rest.substr(0, slash);
  const std::wstring path = slash == std::wstring::npos ? L"" : rest.substr(slash);
  std::wstring full =
      path.rfind(L"//./pipe", 0) == 0 ? path : L"//" + (host.empty() ? L"." : host) + path;
  for (auto& c : full) c = c == L'/' ? L'\\' : c;
  return full;
}

// ---- Service or foreground.

// A stand-in's work: runs until g_stop is set (or it ends by itself), calls ready() once it
// serves, returns its exit code. SERVICE_NAME is the name the SCM started it as ("" in the
// foreground).
using Work =
    std::function<DWORD(const std::wstring& service_name, const std::function<void()>& ready)>;

HANDLE g_stop = nullptr;  // manual-reset: the SCM's STOP or SHUTDOWN, or a console's Ctrl-C

struct ServiceState {
  Work work;
  SERVICE_STATUS_HANDLE handle = nullptr;
  SERVICE_STATUS status{};
  std::mutex mutex;  // the control handler and the work both report
  DWORD checkpoint = 1;
  bool stop_requested = false;
  DWORD exit_code = 0;
};
ServiceState g_service;

void Report(DWORD state, DWORD exit_code = 0) {
  std::lock_guard lock(g_service.mutex);
  if (state == SERVICE_RUNNING && g_service.stop_requested) return;  // stopping already
  const bool pending = state == SERVICE_START_PENDING || state == SERVICE_STOP_PENDING;
  auto& s = g_service.status;
  s.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
  s.dwCurrentState = state;
  s.dwControlsAccepted =
      state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
  s.dwWin32ExitCode = exit_code != 0 ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
  s.dwServiceSpecificExitCode = exit_code;
  s.dwCheckPoint = pending ? g_service.checkpoint++ : 0;
  s.dwWaitHint = pending ? 10000 : 0;
  SetServiceStatus(g_service.handle, &s);
}

DWORD WINAPI ServiceControl(DWORD control, DWORD, LPVOID, LPVOID) {
  switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN: {
      bool first = false;
      {
        std::lock_guard lock(g_service.mutex);
        first = !g_service.stop_requested;
        g_service.stop_requested = true;
      }
      if (first) {
        Report(SERVICE_STOP_PENDING);
        SetEvent(g_stop);
      }
      return NO_ERROR;
    }
    case SERVICE_CONTROL_INTERROGATE:
      return NO_ERROR;
    default:
      return ERROR_CALL_NOT_IMPLEMENTED;
  }
}

void WINAPI ServiceMain(DWORD argc, LPWSTR* argv) {
  // argv[0] is the name the service was started as (the table's own entry is "").
  const std::wstring name = argc > 0 && argv[0] ? argv[0] : L"";
  g_service.handle = RegisterServiceCtrlHandlerExW(name.c_str(), ServiceControl, nullptr);
  if (!g_service.handle) {
    g_service.exit_code = 1;
    return;
  }
  Report(SERVICE_START_PENDING);
  g_service.exit_code = g_service.work(name, [] { Report(SERVICE_RUNNING); });
  Report(SERVICE_STOPPED, g_service.exit_code);
}

BOOL WINAPI ConsoleStop(DWORD) {
  SetEvent(g_stop);
  return TRUE;
}

// Whether the parent process is services.exe (a service's is; a console's or NSSM's child's is
// not). Unknown (no process list): assumed, so that the dispatcher decides.
bool StartedByServiceManager() {
  const HANDLE snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (snapshot == INVALID_HANDLE_VALUE) return true;
  PROCESSENTRY32W entry{};
  entry.dwSize = sizeof(entry);
  std::vector<std::pair<DWORD, std::wstring>> processes;
  DWORD parent = 0;
  for (bool more = Process32FirstW(snapshot, &entry) != FALSE; more;
       more = Process32NextW(snapshot, &entry) != FALSE) {
    if (entry.th32ProcessID == GetCurrentProcessId()) parent = entry.th32ParentProcessID;
    processes.emplace_back(entry.th32ProcessID, entry.szExeFile);
  }
  CloseHandle(snapshot);
  for (const auto& [pid, exe] : processes) {
    if (pid == parent && parent != 0) return Lower(FileNameOf(exe)) == L"services.exe";
  }
  return false;
}

int Run(const char* role, const Work& work, bool service_only) {
  g_stop = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  if (StartedByServiceManager()) {
    g_service.work = work;
    static wchar_t own_process[] = L"";  // ignored for SERVICE_WIN32_OWN_PROCESS
    const SERVICE_TABLE_ENTRYW table[] = {{own_process, ServiceMain}, {nullptr, nullptr}};
    if (StartServiceCtrlDispatcherW(table)) return static_cast<int>(g_service.exit_code);
    if (GetLastError() != ERROR_FAILED_SERVICE_CONTROLLER_CONNECT) {
      std::fprintf(stderr, "%s stand-in: the service dispatcher failed (error %lu)\n", role,
                   GetLastError());
      return 1;
    }
  }
  if (service_only) {
    std::fprintf(stderr,
                 "%s stand-in: runs only as a service (create one whose ImagePath is this "
                 "program, with Parameters\\Application)\n",
                 role);
    return 2;
  }
  SetConsoleCtrlHandler(ConsoleStop, TRUE);
  return static_cast<int>(work(L"", [] {}));
}

// ---- Children (NSSM's program, rke2's kubelet and containerd, the EKS service host's program)

// Starts COMMAND (a whole command line, its program the first word) in DIRECTORY (empty: this
// process's own), without handing it any handle; nullopt with GetLastError()'s code in `error`.
// The thread handle is closed.
std::optional<PROCESS_INFORMATION> StartChild(const std::wstring& command,
                                              const std::wstring& directory, DWORD& error) {
  STARTUPINFOW startup{};
  startup.cb = sizeof(startup);
  PROCESS_INFORMATION child{};
  std::vector<wchar_t> line(command.begin(), command.end());
  line.push_back(L'\0');
  if (!CreateProcessW(nullptr, line.data(), nullptr, nullptr, FALSE, CREATE_UNICODE_ENVIRONMENT,
                      nullptr, directory.empty() ? nullptr : directory.c_str(), &startup, &child)) {
    error = GetLastError();
    return std::nullopt;
  }
  CloseHandle(child.hThread);
  child.hThread = nullptr;
  return child;
}

// Ends a child and waits for it (at most 10 s), then closes its handle.
void EndChild(HANDLE process) {
  TerminateProcess(process, 1);
  WaitForSingleObject(process, 10000);
  CloseHandle(process);
}

struct ChildEnded {
  std::size_t index = 0;  // which of the children
  DWORD exit_code = 0;
};

// Waits for g_stop or for one of CHILDREN to end by itself, then ends (and waits for) all the
// others and closes every handle: nullopt on g_stop, else the child that ended and its exit code.
std::optional<ChildEnded> Supervise(const std::vector<HANDLE>& children) {
  std::vector<HANDLE> waits{g_stop};
  waits.insert(waits.end(), children.begin(), children.end());
  const DWORD which =
      WaitForMultipleObjects(static_cast<DWORD>(waits.size()), waits.data(), FALSE, INFINITE);
  std::optional<ChildEnded> ended;
  if (which > WAIT_OBJECT_0 && which < WAIT_OBJECT_0 + waits.size()) {
    ended = ChildEnded{which - WAIT_OBJECT_0 - 1, 0};
    GetExitCodeProcess(children[ended->index], &ended->exit_code);
  }
  // The last started first (rke2: kubelet before its containerd).
  for (std::size_t i = children.size(); i-- > 0;) {
    if (ended && ended->index == i) {
      CloseHandle(children[i]);
    } else {
      EndChild(children[i]);
    }
  }
  return ended;
}

// ARG quoted, if it must be, so that a program's command-line parser (CommandLineToArgvW, the
// MSVC runtime) gives it back unchanged.
std::wstring QuoteArgument(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\"") == std::wstring::npos) return arg;
  std::wstring out = L"\"";
  std::size_t backslashes = 0;
  for (const wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    out.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
    out += c;
    backslashes = 0;
  }
  out.append(backslashes * 2, L'\\');
  return out + L"\"";
}

// Where word INDEX (0: the program) of a command line starts, by the rules of
// CommandLineToArgvW: the program from a leading quote to the next one, else to a blank; then
// words separated by blanks outside quotes, a quote toggling unless an odd number of backslashes
// precede it, "" inside quotes a literal quote. npos when the line has fewer words.
std::size_t WordStart(const std::wstring& line, std::size_t index) {
  const auto blank = [&line](std::size_t i) { return line[i] == L' ' || line[i] == L'\t'; };
  std::size_t i = 0;
  while (i < line.size() && blank(i)) ++i;
  if (i >= line.size()) return std::wstring::npos;
  if (index == 0) return i;
  if (line[i] == L'"') {
    i = line.find(L'"', i + 1);
    i = i == std::wstring::npos ? line.size() : i + 1;
  } else {
    while (i < line.size() && !blank(i)) ++i;
  }
  for (std::size_t word = 1;; ++word) {
    while (i < line.size() && blank(i)) ++i;
    if (i >= line.size()) return std::wstring::npos;
    if (word == index) return i;
    bool quoted = false;
    std::size_t backslashes = 0;
    while (i < line.size() && (quoted || !blank(i))) {
      if (line[i] == L'"' && backslashes % 2 == 0) {
        if (quoted && i + 1 < line.size() && line[i + 1] == L'"') {
          ++i;  // "" inside quotes: a literal quote
        } else {
          quoted = !quoted;
        }
      }
      backslashes = line[i] == L'\\' ? backslashes + 1 : 0;
      ++i;
    }
  }
}

// ---- kubelet.exe

// The socket listening on ADDRESS:PORT, or INVALID_SOCKET with `unusable` set when ADDRESS is no
// IP address (else the bind or listen failed).
SOCKET Listen(const std::wstring& address, const std::wstring& port, bool& unusable) {
  std::wstring host = address;
  if (host.size() >= 2 && host.front() == L'[' && host.back() == L']')
    host = host.substr(1, host.size() - 2);
  ADDRINFOW hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  ADDRINFOW* found = nullptr;
  unusable = GetAddrInfoW(host.c_str(), port.c_str(), &hints, &found) != 0 || !found;
  if (unusable) return INVALID_SOCKET;
  SOCKET s = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  // No SO_REUSEADDR: a port someone else holds must fail to bind.
  if (s != INVALID_SOCKET && (bind(s, found->ai_addr, static_cast<int>(found->ai_addrlen)) != 0 ||
                              listen(s, SOMAXCONN) != 0)) {
    closesocket(s);
    s = INVALID_SOCKET;
  }
  FreeAddrInfoW(found);
  return s;
}

void AnswerHttp(SOCKET client) {
  const DWORD timeout_ms = 2000;  // one thread serves everyone: a silent client waits no longer
  setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, reinterpret_cast<const char*>(&timeout_ms),
             sizeof(timeout_ms));
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos &&
         request.find("\n\n") == std::string::npos && request.size() < 8192) {
    const int n = recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const std::string line = request.substr(0, request.find_first_of("\r\n"));
  const auto space = line.find(' ');
  const std::string method = line.substr(0, space);
  std::string target;
  if (space != std::string::npos) {
    const auto end = line.find(' ', space + 1);
    target = line.substr(space + 1, end == std::string::npos ? end : end - space - 1);
  }
  const std::string path = target.substr(0, target.find('?'));
  const bool healthz = method == "GET" && path == "/healthz";
  const std::string body = healthz ? "ok" : "404 page not found\n";
  const std::string response = std::string(healthz ? "HTTP/1.1 200 OK" : "HTTP/1.1 404 Not Found") +
                               "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  send(client, response.data(), static_cast<int>(response.size()), 0);
  shutdown(client, SD_SEND);
  closesocket(client);
}

void ServeHttp(SOCKET listener) {
  while (WaitForSingleObject(g_stop, 0) == WAIT_TIMEOUT) {
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(listener, &readable);
    timeval wait{0, 200 * 1000};
    if (select(0, &readable, nullptr, nullptr, &wait) <= 0) continue;
    const SOCKET client = accept(listener, nullptr, nullptr);
    if (client != INVALID_SOCKET) AnswerHttp(client);
  }
}

// One connection to the container runtime, closed at once (failures ignored).
void DialRuntimeOnce(const std::wstring& endpoint) {
  if (const auto pipe = PipePathOfEndpoint(endpoint)) {
    const HANDLE handle = CreateFileW(pipe->c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr,
                                      OPEN_EXISTING, 0, nullptr);
    if (handle != INVALID_HANDLE_VALUE) CloseHandle(handle);
    return;
  }
  const std::wstring tcp = L"tcp://";
  if (Lower(endpoint.substr(0, tcp.size())) != tcp) return;
  std::wstring host_port = endpoint.substr(tcp.size());
  host_port = host_port.substr(0, host_port.find(L'/'));
  const auto colon = host_port.rfind(L':');
  if (colon == std::wstring::npos) return;
  std::wstring host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == L'[') host = host.substr(1, host.size() - 2);
  ADDRINFOW hints{};
  hints.ai_socktype = SOCK_STREAM;
  ADDRINFOW* found = nullptr;
  if (GetAddrInfoW(host.c_str(), host_port.substr(colon + 1).c_str(), &hints, &found) != 0) return;
  const SOCKET s = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (s != INVALID_SOCKET) {
    connect(s, found->ai_addr, static_cast<int>(found->ai_addrlen));
    closesocket(s);
  }
  FreeAddrInfoW(found);
}

DWORD Kubelet(const std::wstring&, const std::function<void()>& ready) {
  LogStart(L"starts.log");
  const auto args = SplitCommandLine(GetCommandLineW());
  const std::wstring port = FlagValue(args, {L"--healthz-port"}).value_or(L"10248");
  const std::wstring address = FlagValue(args, {L"--healthz-bind-address"}).value_or(L"127.0.0.1");
  const auto endpoint = FlagValue(args, {L"--container-runtime-endpoint"});
  unsigned long port_number = 0;
  try {
    std::size_t used = 0;
    port_number = std::stoul(port, &used);
    if (used != port.size() || port_number > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    std::fprintf(stderr, "kubelet stand-in: invalid --healthz-port %s\n",
                 Utf8FromWide(port.c_str()).c_str());
    return 1;
  }
  SOCKET listener = INVALID_SOCKET;
  if (port_number != 0) {  // kubelet: 0 disables the healthz endpoint
    bool unusable = false;
    listener = Listen(address, std::to_wstring(port_number), unusable);
    if (listener == INVALID_SOCKET) {
      std::fprintf(stderr, "kubelet stand-in: %s %s:%lu\n",
                   unusable ? "invalid --healthz-bind-address" : "cannot listen on",
                   Utf8FromWide(address.c_str()).c_str(), port_number);
      return unusable ? 1 : 3;
    }
  }
  std::thread http;
  if (listener != INVALID_SOCKET) http = std::thread(ServeHttp, listener);
  std::thread dialer;
  if (endpoint) {
    dialer = std::thread([runtime = *endpoint] {
      do DialRuntimeOnce(runtime);
      while (WaitForSingleObject(g_stop, 1000) == WAIT_TIMEOUT);
    });
  }
  ready();
  WaitForSingleObject(g_stop, INFINITE);
  if (http.joinable()) http.join();
  if (dialer.joinable()) dialer.join();
  if (listener != INVALID_SOCKET) closesocket(listener);
  return 0;
}

// ---- nssm.exe

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

// Every literal `--name=value` token of a PowerShell script, in order, without those that hold a
// `$` (PowerShell would substitute a variable or an expression there). A token starts at `--`
// after a blank, a quote or a bracket, its value ends at a blank or an unescaped quote, and a
// backtick escapes the next character as in PowerShell's double-quoted strings (`" is "). Lines
// starting with # and <# ... #> blocks are comments.
std::vector<std::string> LiteralFlags(const std::string& script) {
  const auto is_name = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  };
  const auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  std::vector<std::string> flags;
  bool line_start = true;
  std::size_t i = 0;
  while (i < script.size()) {
    const char c = script[i];
    if (script.compare(i, 2, "<#") == 0) {
      const auto end = script.find("#>", i + 2);
      i = end == std::string::npos ? script.size() : end + 2;
      continue;
    }
    if (c == '#' && line_start) {
      i = script.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (is_blank(c)) {
      line_start = line_start || c == '\n';
      ++i;
      continue;
    }
    line_start = false;
    const bool starts_token = i == 0 || !(is_name(script[i - 1]) || script[i - 1] == '`');
    if (c == '-' && starts_token && script.compare(i, 2, "--") == 0) {
      std::size_t j = i + 2;
      while (j < script.size() && is_name(script[j])) ++j;
      if (j > i + 2 && j < script.size() && script[j] == '=') {
        std::string value;
        std::size_t k = j + 1;
        while (k < script.size() && !is_blank(script[k]) && script[k] != '"' && script[k] != '\'') {
          if (script[k] == '`' && k + 1 < script.size()) ++k;
          value += script[k++];
        }
        if (script.substr(i, k - i).find('$') == std::string::npos)
          flags.push_back(script.substr(i, j + 1 - i) + value);
        i = k;
        continue;
      }
    }
    ++i;
  }
  return flags;
}

// The KUBELET_KUBEADM_ARGS="..." of kubeadm's kubeadm-flags.env: the text between its quotes.
std::string KubeadmArgs(const std::string& env_file) {
  const std::string key = "KUBELET_KUBEADM_ARGS=";
  std::size_t start = 0;
  while (start < env_file.size()) {
    auto end = env_file.find('\n', start);
    if (end == std::string::npos) end = env_file.size();
    std::string line = env_file.substr(start, end - start);
    start = end + 1;
    line.erase(0, line.find_first_not_of(" \t"));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.rfind(key, 0) != 0) continue;
    std::string value = line.substr(key.size());
    const auto open = value.find('"');
    const auto close = value.rfind('"');
    if (open != std::string::npos && close > open) value = value.substr(open + 1, close - open - 1);
    return value;
  }
  return "";
}

// What NSSM's PowerShell would end up starting (there is no PowerShell here): the kubelet.exe in
// NSSM_FOLDER with the flags of the script named by PARAMETERS (`-File SCRIPT`, else the first
// word ending in .ps1). A script that mentions kubeadm-flags.env is kubeadm's StartKubelet.ps1:
// the KUBELET_KUBEADM_ARGS of %SystemDrive%\var\lib\kubelet\kubeadm-flags.env come first (none if
// that file is unreadable: the script's Get-Content fails, Invoke-Expression still runs), then
// the script's literal flags; any other script (AKS's kubeletstart.ps1) gives its literal flags.
std::optional<std::wstring> EmulatedPowerShell(const std::wstring& parameters,
                                               const std::wstring& nssm_folder,
                                               std::string& error) {
  std::wstring script;
  const auto words = SplitParameters(parameters);
  for (std::size_t i = 0; i + 1 < words.size() && script.empty(); ++i) {
    if (Lower(words[i]) == L"-file") script = words[i + 1];
  }
  for (std::size_t i = 0; i < parameters.size() && script.empty();) {
    const auto start = parameters.find_first_not_of(L" \t\"'", i);
    if (start == std::wstring::npos) break;
    auto end = parameters.find_first_of(L" \t\"'", start);
    if (end == std::wstring::npos) end = parameters.size();
    const std::wstring word = parameters.substr(start, end - start);
    if (EndsWithNoCase(word, L".ps1")) script = word;
    i = end;
  }
  if (script.empty()) {
    error =
        "no script (-File X or a .ps1 word) in AppParameters: " + Utf8FromWide(parameters.c_str());
    return std::nullopt;
  }
  const auto text = ReadTextFile(script);
  if (!text) {
    error = "cannot read the script " + Utf8FromWide(script.c_str());
    return std::nullopt;
  }
  std::wstring command = L"\"" + nssm_folder + L"\\kubelet.exe\"";
  if (text->find("kubeadm-flags.env") != std::string::npos) {
    const auto env =
        ReadTextFile(ExpandEnvironment(L"%SystemDrive%\\var\\lib\\kubelet\\kubeadm-flags.env"));
    const std::string kubeadm = env ? KubeadmArgs(*env) : "";
    if (!kubeadm.empty()) command += L" " + Widen(kubeadm);
  }
  for (const auto& flag : LiteralFlags(*text)) command += L" " + Widen(flag);
  return command;
}

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

  std::wstring command;
  const std::wstring program = Lower(FileNameOf(*application));
  if (program == L"powershell.exe" || program == L"pwsh.exe") {
    std::string error;
    const auto emulated = EmulatedPowerShell(parameters, folder, error);
    if (!emulated) return fail(error);
    command = *emulated;
  } else {
    command = L"\"" + *application + L"\"" + (parameters.empty() ? L"" : L" " + parameters);
  }
  if (directory.empty()) {
    const DWORD attributes = GetFileAttributesW(FolderOf(*application).c_str());
    if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY))
      directory = FolderOf(*application);
  }

  DWORD error = 0;
  const auto child = StartChild(command, directory, error);
  if (!child) {
    return fail("cannot start " + Utf8FromWide(command.c_str()) + " in " +
                Utf8FromWide(directory.c_str()) + " (error " + std::to_string(error) + ")");
  }
  AppendLine(log,
             "start " + std::to_string(child->dwProcessId) + " " + Utf8FromWide(command.c_str()));
  ready();
  const auto ended = Supervise({child->hProcess});
  return ended ? ended->exit_code : 0;
}

// ---- containerd.exe

// The `address` of the top-level [grpc] table of a containerd config.toml (a basic "..." string
// with its escapes, or a literal '...' one), if it has one.
std::optional<std::string> GrpcAddress(const std::string& toml) {
  bool in_grpc = false;
  std::size_t start = 0;
  while (start < toml.size()) {
    auto end = toml.find('\n', start);
    if (end == std::string::npos) end = toml.size();
    std::string line = toml.substr(start, end - start);
    start = end + 1;
    line.erase(0, line.find_first_not_of(" \t"));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      std::string table = line.substr(0, line.find(']') + 1);
      std::string compact;
      for (const char c : table)
        if (c != ' ' && c != '\t') compact += c;
      in_grpc = compact == "[grpc]";
      continue;
    }
    if (!in_grpc) continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    std::string name = line.substr(0, equals);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != "address" && name != "\"address\"" && name != "'address'") continue;
    std::string value = line.substr(equals + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (value.empty()) return std::nullopt;
    if (value[0] == '\'') {
      const auto close = value.find('\'', 1);
      return close == std::string::npos ? std::nullopt : std::optional(value.substr(1, close - 1));
    }
    if (value[0] != '"') return std::nullopt;
    std::string out;
    for (std::size_t i = 1; i < value.size(); ++i) {
      const char c = value[i];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (++i >= value.size()) return std::nullopt;
      switch (value[i]) {
        case 'b':
          out += '\b';
          break;
        case 't':
          out += '\t';
          break;
        case 'n':
          out += '\n';
          break;
        case 'f':
          out += '\f';
          break;
        case 'r':
          out += '\r';
          break;
        case 'u':
        case 'U': {
          const std::size_t digits = value[i] == 'u' ? 4 : 8;
          if (i + digits >= value.size()) return std::nullopt;
          const std::string hex = value.substr(i + 1, digits);
          if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            return std::nullopt;
          const auto code = std::stoul(hex, nullptr, 16);
          const wchar_t wide = static_cast<wchar_t>(code);  // pipe names: the BMP is plenty
          out += Narrow(&wide, 1);
          i += digits;
          break;
        }
        default:
          out += value[i];
          break;  // \\ and \" (and anything else, leniently)
      }
    }
    return std::nullopt;  // unterminated
  }
  return std::nullopt;
}

bool PipeServed(const std::wstring& pipe) {
  // Served: an instance waits for a client, or all are busy. (Wine does not enforce
  // FILE_FLAG_FIRST_PIPE_INSTANCE, so this is asked first.)
  return WaitNamedPipeW(pipe.c_str(), 1) != FALSE || GetLastError() == ERROR_SEM_TIMEOUT;
}

HANDLE CreateInstance(const std::wstring& pipe, bool first) {
  return CreateNamedPipeW(
      pipe.c_str(),
      PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
      PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT, PIPE_UNLIMITED_INSTANCES, 65536, 65536, 0,
      nullptr);
}

// Accepts clients until g_stop: the next instance is made before a connected one is closed, so
// that one always listens.
void ServePipe(const std::wstring& pipe, HANDLE listening, const std::wstring& connections_log) {
  const HANDLE connected_event = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  while (WaitForSingleObject(g_stop, 0) == WAIT_TIMEOUT) {
    if (listening == INVALID_HANDLE_VALUE) {  // could not make one: try again shortly
      listening = CreateInstance(pipe, false);
      if (listening == INVALID_HANDLE_VALUE) WaitForSingleObject(g_stop, 100);
      continue;
    }
    OVERLAPPED overlapped{};
    overlapped.hEvent = connected_event;
    ResetEvent(connected_event);
    bool connected = ConnectNamedPipe(listening, &overlapped) != FALSE;
    DWORD error = connected ? ERROR_SUCCESS : GetLastError();
    if (error == ERROR_IO_PENDING) {
      const HANDLE waits[] = {g_stop, connected_event};
      const bool stop = WaitForMultipleObjects(2, waits, FALSE, INFINITE) == WAIT_OBJECT_0;
      DWORD ignored = 0;
      if (stop) {
        CancelIo(listening);
        GetOverlappedResult(listening, &overlapped, &ignored, TRUE);
        break;
      }
      connected = GetOverlappedResult(listening, &overlapped, &ignored, FALSE) != FALSE;
      error = connected ? ERROR_SUCCESS : GetLastError();
    }
    // A client that connected before the wait began, or has already closed its end, was a client.
    connected = connected || error == ERROR_PIPE_CONNECTED || error == ERROR_NO_DATA;
    if (connected) {
      ULONG client = 0;
      GetNamedPipeClientProcessId(listening, &client);
      AppendLine(connections_log, "connect " + std::to_string(client));
    } else {
      WaitForSingleObject(g_stop, 10);  // an unexpected failure must not spin
    }
    const HANDLE next = CreateInstance(pipe, false);
    DisconnectNamedPipe(listening);
    CloseHandle(listening);
    listening = next;
  }
  if (listening != INVALID_HANDLE_VALUE) CloseHandle(listening);
  CloseHandle(connected_event);
}

DWORD Containerd(const std::wstring&, const std::function<void()>& ready) {
  LogStart(L"starts.log");
  const auto args = SplitCommandLine(GetCommandLineW());
  const auto config_flag = FlagValue(args, {L"--config", L"-config", L"--c", L"-c"});
  const std::wstring config =
      config_flag.value_or(ExpandEnvironment(L"%ProgramFiles%\\containerd\\config.toml"));
  const auto toml = ReadTextFile(config);
  if (!toml && config_flag) {
    std::fprintf(stderr, "containerd stand-in: failed to load TOML from %s\n",
                 Utf8FromWide(config.c_str()).c_str());
    return 1;
  }
  std::wstring pipe = L"\\\\.\\pipe\\containerd-containerd";
  if (const auto address = toml ? GrpcAddress(*toml) : std::nullopt) {
    pipe = Widen(*address);
    if (const auto from_url = PipePathOfEndpoint(pipe)) pipe = *from_url;
    for (auto& c : pipe) c = c == L'/' ? L'\\' : c;
  }
  const std::string pipe_text = Utf8FromWide(pipe.c_str());
  if (PipeServed(pipe)) {
    std::fprintf(stderr, "containerd stand-in: %s is served already\n", pipe_text.c_str());
    return 4;
  }
  const HANDLE first = CreateInstance(pipe, true);
  if (first == INVALID_HANDLE_VALUE) {
    std::fprintf(stderr, "containerd stand-in: cannot create %s (error %lu)\n", pipe_text.c_str(),
                 GetLastError());
    return 4;
  }
  std::thread server(ServePipe, pipe, first, FolderOf(SelfPath()) + L"\\connections.log");
  ready();
  server.join();  // until g_stop
  return 0;
}

// ---- rke2.exe

// One YAML scalar of a config.yaml line, from `at` (blanks skipped): "double-quoted" (the escapes
// \" \\ \/ \t \n \r), 'single-quoted' ('' a quote) or plain (up to a character of STOPS or a ` #`
// comment, trailing blanks dropped). `at` ends past it.
std::string YamlScalar(const std::string& text, std::size_t& at, const char* stops) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  std::string out;
  if (at < text.size() && text[at] == '"') {
    for (++at; at < text.size() && text[at] != '"'; ++at) {
      if (text[at] != '\\' || at + 1 >= text.size()) {
        out += text[at];
        continue;
      }
      const char escaped = text[++at];
      out += escaped == 't' ? '\t' : escaped == 'n' ? '\n' : escaped == 'r' ? '\r' : escaped;
    }
    ++at;
    return out;
  }
  if (at < text.size() && text[at] == '\'') {
    for (++at; at < text.size(); ++at) {
      if (text[at] == '\'') {
        if (at + 1 < text.size() && text[at + 1] == '\'') {
          out += text[++at];
          continue;
        }
        break;
      }
      out += text[at];
    }
    ++at;
    return out;
  }
  while (at < text.size() && std::string_view(stops).find(text[at]) == std::string_view::npos &&
         !(text[at] == '#' && (out.empty() || out.back() == ' ' || out.back() == '\t'))) {
    out += text[at++];
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return out;
}

// The items of the top-level `kubelet-arg` of an rke2 config.yaml, read line by line as our
// tests write it: a block list (`- "a=b"` / `- a=b` lines, up to the next line that is neither an
// item, a comment nor blank), a flow list `["a=b", c=d]` (on one line or several), or a single
// string. Not a YAML parser: anchors, block scalars, multi-line scalars and nested lists are
// beyond it (config.yaml.d is not read either).
std::vector<std::string> KubeletArgItems(const std::string& yaml) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < yaml.size();) {
    auto end = yaml.find('\n', start);
    if (end == std::string::npos) end = yaml.size();
    std::string line = yaml.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    start = end + 1;
  }
  std::vector<std::string> items;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::size_t at = 0;
    if (lines[i].empty() || lines[i][0] == ' ' || lines[i][0] == '\t') continue;  // not top level
    if (YamlScalar(lines[i], at, ":") != "kubelet-arg" || at >= lines[i].size() ||
        lines[i][at] != ':')
      continue;
    items.clear();  // a repeated key: the last wins
    std::string value = lines[i].substr(at + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (value.empty() || value[0] == '#') {  // a block list on the lines that follow
      for (std::size_t j = i + 1; j < lines.size(); ++j) {
        const auto first = lines[j].find_first_not_of(" \t");
        if (first == std::string::npos || lines[j][first] == '#') continue;
        if (lines[j][first] != '-' || (first + 1 < lines[j].size() && lines[j][first + 1] != ' ' &&
                                       lines[j][first + 1] != '\t'))
          break;
        std::size_t item = first + 1;
        items.push_back(YamlScalar(lines[j], item, ""));
      }
    } else if (value[0] == '[') {  // a flow list, up to its closing bracket
      std::string flow = value;
      for (std::size_t j = i + 1; j < lines.size() && flow.find(']') == std::string::npos; ++j)
        flow += " " + lines[j];
      std::size_t item = 1;
      while (item < flow.size()) {
        while (item < flow.size() && (flow[item] == ' ' || flow[item] == '\t')) ++item;
        if (item >= flow.size() || flow[item] == ']') break;
        items.push_back(YamlScalar(flow, item, ",]"));
        while (item < flow.size() && (flow[item] == ' ' || flow[item] == '\t')) ++item;
        if (item < flow.size() && flow[item] == ',') ++item;
      }
    } else {
      std::size_t item = 0;
      items.push_back(YamlScalar(value, item, ""));
    }
  }
  return items;
}

// rke2's kubelet command line: rke2's own defaults (the runtime endpoint of its embedded
// containerd, k3s pkg/agent/config/config_windows.go), each replaced by the user's kubelet-arg
// items of the same name (k3s pkg/util/args.go GetArgs: a leading `--` dropped, an item without
// `=` is name=true), then one `--name=value` per item, in the file's order. (GetArgs sorts them
// by name and handles `name+=`/`name-=`; the stand-in does neither.)
std::wstring Rke2KubeletCommand(const std::wstring& folder, const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::string>> args;
  for (std::string item : items) {
    if (item.rfind("--", 0) == 0) item.erase(0, 2);
    const auto equals = item.find('=');
    args.emplace_back(item.substr(0, equals),
                      equals == std::string::npos ? "true" : item.substr(equals + 1));
  }
  const std::vector<std::pair<std::string, std::string>> defaults = {
      {"container-runtime-endpoint", "npipe:////./pipe/containerd-containerd"}};
  std::wstring command = L"\"" + folder + L"\\kubelet.exe\"";
  for (const auto& [name, value] : defaults) {
    bool replaced = false;
    for (const auto& arg : args) replaced = replaced || arg.first == name;
    if (!replaced) command += L" " + QuoteArgument(Widen("--" + name + "=" + value));
  }
  for (const auto& [name, value] : args)
    command += L" " + QuoteArgument(Widen("--" + name + "=" + value));
  return command;
}

DWORD Rke2(const std::wstring&, const std::function<void()>& ready) {
  const std::wstring folder = FolderOf(SelfPath());
  const std::wstring log = folder + L"\\rke2-starts.log";
  const auto fail = [&log](const std::string& why) {
    AppendLine(log, "error " + why);
    return DWORD{2};
  };
  const auto args = SplitCommandLine(GetCommandLineW());
  // rke2's default /etc/rancher/rke2/config.yaml is on the system drive; none: its defaults.
  const std::wstring config =
      FlagValue(args, {L"--config", L"-c"})
          .value_or(ExpandEnvironment(L"%SystemDrive%\\etc\\rancher\\rke2\\config.yaml"));
  const auto yaml = ReadTextFile(config);
  const std::wstring kubelet =
      Rke2KubeletCommand(folder, yaml ? KubeletArgItems(*yaml) : std::vector<std::string>{});
  // containerd's --config only when the file exists (containerd refuses a --config it cannot
  // read; without one it serves its default pipe).
  std::wstring containerd = L"\"" + folder + L"\\containerd.exe\"";
  const std::wstring toml = folder + L"\\containerd.toml";
  if (GetFileAttributesW(toml.c_str()) != INVALID_FILE_ATTRIBUTES)
    containerd += L" --config " + QuoteArgument(toml);

  DWORD error = 0;
  const auto containerd_child = StartChild(containerd, L"", error);
  if (!containerd_child) {
    return fail("cannot start " + Utf8FromWide(containerd.c_str()) + " (error " +
                std::to_string(error) + ")");
  }
  const auto kubelet_child = StartChild(kubelet, L"", error);
  if (!kubelet_child) {
    EndChild(containerd_child->hProcess);
    return fail("cannot start " + Utf8FromWide(kubelet.c_str()) + " (error " +
                std::to_string(error) + ")");
  }
  AppendLine(log, "start " + std::to_string(kubelet_child->dwProcessId) + " " +
                      Utf8FromWide(kubelet.c_str()));
  ready();
  const auto ended = Supervise({containerd_child->hProcess, kubelet_child->hProcess});
  if (!ended) return 0;
  AppendLine(log, std::string("error ") + (ended->index == 0 ? "containerd.exe" : "kubelet.exe") +
                      " ended with exit code " + std::to_string(ended->exit_code));
  return ended->exit_code;
}

// ---- EKS-WindowsServiceHost.exe

// `EKS-WindowsServiceHost.exe SERVICE PROGRAM ARGS...`: runs the rest of its own command line,
// verbatim from PROGRAM on, as its child.
DWORD ServiceHost(const std::wstring&, const std::function<void()>& ready) {
  const std::wstring log = FolderOf(SelfPath()) + L"\\servicehost-starts.log";
  const auto fail = [&log](const std::string& why) {
    AppendLine(log, "error " + why);
    return DWORD{2};
  };
  const std::wstring line = GetCommandLineW();
  const std::size_t program = WordStart(line, 2);
  if (program == std::wstring::npos)
    return fail("no program to run (SERVICE PROGRAM ARGS...): " + Utf8FromWide(line.c_str()));
  const std::wstring command = line.substr(program);
  DWORD error = 0;
  const auto child = StartChild(command, L"", error);
  if (!child) {
    return fail("cannot start " + Utf8FromWide(command.c_str()) + " (error " +
                std::to_string(error) + ")");
  }
  AppendLine(log,
             "start " + std::to_string(child->dwProcessId) + " " + Utf8FromWide(command.c_str()));
  ready();
  const auto ended = Supervise({child->hProcess});
  return ended ? ended->exit_code : 0;
}

// ---- --probe-pipe

int ProbePipe(const std::wstring& name) {
  std::wstring pipe = name;
  if (const auto from_url = PipePathOfEndpoint(name)) {
    pipe = *from_url;
  } else if (name.rfind(L"\\\\", 0) == 0 || name.rfind(L"//", 0) == 0) {
    for (auto& c : pipe) c = c == L'/' ? L'\\' : c;
  } else {
    pipe = L"\\\\.\\pipe\\" + name;
  }
  const std::string text = Utf8FromWide(pipe.c_str());
  for (int attempt = 0; attempt < 2; ++attempt) {
    const HANDLE handle = CreateFileW(pipe.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr,
                                      OPEN_EXISTING, 0, nullptr);
    if (handle != INVALID_HANDLE_VALUE) {
      ULONG server = 0;
      const bool known = GetNamedPipeServerProcessId(handle, &server) != FALSE;
      CloseHandle(handle);
      if (known) {
        std::printf("%s: served by process %lu\n", text.c_str(), server);
      } else {
        std::printf("%s: served (by a process not known)\n", text.c_str());
      }
      return 0;
    }
    const DWORD error = GetLastError();
    if (error != ERROR_PIPE_BUSY || attempt > 0) {
      std::printf("%s: not served (error %lu)\n", text.c_str(), error);
      return 1;
    }
    WaitNamedPipeW(pipe.c_str(), 2000);  // every instance busy: wait for one once
  }
  return 1;
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const auto args = SplitCommandLine(GetCommandLineW());
  if (args.size() >= 2 && args[1] == L"--probe-pipe") {
    if (args.size() != 3) {
      std::fprintf(stderr, "usage: node-standin.exe --probe-pipe NAME\n");
      return 2;
    }
    return ProbePipe(args[2]);
  }
  WSADATA winsock{};
  WSAStartup(MAKEWORD(2, 2), &winsock);
  std::wstring role = Lower(FileNameOf(SelfPath()));
  if (EndsWithNoCase(role, L".exe")) role.resize(role.size() - 4);
  if (role == L"kubelet") return Run("kubelet", Kubelet, false);
  if (role == L"nssm") return Run("nssm", Nssm, true);
  if (role == L"containerd") return Run("containerd", Containerd, false);
  if (role == L"rke2") return Run("rke2", Rke2, false);
  if (role == L"eks-windowsservicehost") return Run("EKS-WindowsServiceHost", ServiceHost, false);
  std::fprintf(stderr,
               "node-standin.exe: a test stand-in; copy it as kubelet.exe, nssm.exe, "
               "containerd.exe, rke2.exe or EKS-WindowsServiceHost.exe (see "
               "tests/windows/node_standin.cpp), or run it with --probe-pipe NAME\n");
  return 2;
}
