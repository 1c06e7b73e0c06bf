// platform.h on Windows: named pipes bridged to loopback TCP, the service control manager, the
// console's code page and binary standard streams, TerminateProcess.
#include <fcntl.h>
#include <io.h>
#include <spdlog/spdlog.h>
#include <windows.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "config/serve_defaults.h"
#include "devices/windows/nvidia_query.h"
#include "devices/windows/wide_text.h"
#include "shim/cli/platform.h"
#include "shim/windows/pipe_transport.h"
#include "shim/windows/service.h"

namespace dxshim {
namespace {

class WindowsPipeBridges : public PipeBridges {
 public:
  explicit WindowsPipeBridges(std::unique_ptr<windows::PipeTransport> pipes)
      : pipes_(std::move(pipes)) {}
  void Listen(socket_bridge::HandToServer hand) override { pipes_->Listen(std::move(hand)); }
  void Stop() override { pipes_->Stop(); }
  bool KnowsCallers() const override { return pipes_->serves_pipe(); }
  windows::PipeTransport& pipes() { return *pipes_; }

 private:
  std::unique_ptr<windows::PipeTransport> pipes_;
};

}  // namespace

std::unique_ptr<PipeBridges> PipeBridges::ForServe(
    ProxyOptions& options, const std::string& sddl,
    std::function<void(const std::string& program)> on_client, CriCallers* callers) {
  auto bridges = std::make_unique<WindowsPipeBridges>(std::make_unique<windows::PipeTransport>(
      options.listen, options.runtime, sddl,
      [](const std::string& line) { spdlog::info("{}", line); },
      [](const std::string& line) { spdlog::warn("{}", line); }));
  if (on_client) bridges->pipes().OnClient(std::move(on_client));
  bridges->pipes().RecordCallers(callers);
  bridges->pipes().WaitForPipe(kPipeFreeWait);
  if (bridges->pipes().serves_pipe()) {
    options.handed_connections = true;
    options.admit_peer = [p = &bridges->pipes()](std::string_view peer) { return p->Admits(peer); };
  }
  return bridges;
}

std::unique_ptr<PipeBridges> PipeBridges::ForDialing(Endpoint& target) {
  // A named pipe (containerd's, or dxshim's own for doctor), reached as serve reaches the
  // runtime: through a forwarder on loopback that only this process may use. Nothing is
  // listened on here.
  Endpoint no_listen{Endpoint::Kind::kTcp, ""};
  return std::make_unique<WindowsPipeBridges>(std::make_unique<windows::PipeTransport>(
      no_listen, target, "", [](const std::string& line) { spdlog::debug("{}", line); },
      [](const std::string& line) { spdlog::warn("{}", line); }));
}

bool WindowsNode() { return true; }

bool Elevated() {
  SID_IDENTIFIER_AUTHORITY nt = SECURITY_NT_AUTHORITY;
  PSID administrators = nullptr;
  if (!AllocateAndInitializeSid(&nt, 2, SECURITY_BUILTIN_DOMAIN_RID, DOMAIN_ALIAS_RID_ADMINS, 0, 0,
                                0, 0, 0, 0, &administrators)) {
    return false;
  }
  BOOL member = FALSE;
  // The token of this thread (or process): a filtered, not elevated token leaves the group
  // deny-only, which CheckTokenMembership does not count.
  if (!CheckTokenMembership(nullptr, administrators, &member)) member = FALSE;
  FreeSid(administrators);
  return member != FALSE;
}

Utf8Console::Utf8Console() : previous_(GetConsoleOutputCP()) { SetConsoleOutputCP(CP_UTF8); }
Utf8Console::~Utf8Console() {
  if (previous_ != 0) SetConsoleOutputCP(previous_);
}

std::string InstalledConfigPath() {
  // The W call: the A one gives the ANSI code page, and the path is used as UTF-8.
  wchar_t data[MAX_PATH] = {};
  const DWORD n = GetEnvironmentVariableW(L"ProgramData", data, MAX_PATH);
  // Only read (doctor): a surrogate with no UTF-8 form is shown, and names no file that exists.
  const std::string root =
      n > 0 && n < MAX_PATH ? devices::windows::Narrow(data, n, devices::windows::Surrogates::kShow)
                            : "C:\\ProgramData";
  return root + std::string(config::kInstalledWindowsConfig)
                    .substr(std::string_view(config::kProgramDataVariable).size());
}

int RunServeProcess(const std::function<int(const std::function<void()>& ready)>& serve,
                    const std::function<void()>& stop, std::chrono::milliseconds stop_wait) {
  windows::ServiceCallbacks service;
  service.run = serve;
  service.stop = stop;
  service.stop_wait_hint_ms = static_cast<DWORD>(stop_wait.count());
  bool not_a_service = false;
  const int code = windows::RunAsService("dxshim", service, not_a_service);
  if (!not_a_service) return code;
  return serve([] {});
}

int ReportFailedStart(int code, const std::vector<std::string>& args) {
  // --check and --help are for a console: they skip the attempt (which takes seconds to fail
  // under wine).
  const bool console_only = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--check" || a == "--help" || a == "-h";
  });
  if (console_only) return code;
  windows::ServiceCallbacks failed;
  failed.run = [code](const std::function<void()>&) { return code; };
  failed.stop = [] {};
  bool not_a_service = false;
  const int reported = windows::RunAsService("dxshim", failed, not_a_service);
  return not_a_service ? code : reported;
}

bool FollowParent(long /*parent*/) { return true; }

bool WaitForNotifications(const std::atomic<bool>& stopping, const std::function<void()>& changed) {
  char bytes[256];
  // An anonymous pipe: PeekNamedPipe says what waits without blocking, and the end of the pipe.
  const HANDLE input = GetStdHandle(STD_INPUT_HANDLE);
  while (!stopping) {
    DWORD waiting = 0;
    if (!PeekNamedPipe(input, nullptr, 0, nullptr, &waiting, nullptr)) {
      return GetLastError() == ERROR_BROKEN_PIPE;
    }
    if (waiting == 0) {
      Sleep(250);
      continue;
    }
    DWORD n = 0;
    if (!ReadFile(input, bytes, sizeof bytes, &n, nullptr) || n == 0) return true;
    changed();
  }
  return false;
}

int RunNvidiaUuids(const std::vector<std::string>& args) {
  return devices::windows::RunNvidiaUuidsCommand(args);
}

void UseBinaryStandardStreams() {
  _setmode(_fileno(stdout), _O_BINARY);
  _setmode(_fileno(stderr), _O_BINARY);
}

void EndProcessNow(int code) {
  TerminateProcess(GetCurrentProcess(), static_cast<UINT>(code));
  std::_Exit(code);  // not reached: TerminateProcess ends this process before it returns
}

}  // namespace dxshim
