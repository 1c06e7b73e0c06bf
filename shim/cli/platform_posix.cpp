// platform.h on POSIX: no pipes or service manager to deal with; the plugin child follows its
// parent with PR_SET_PDEATHSIG (Linux) and reads serve's notifications from stdin.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "config/serve_defaults.h"
#include "shim/cli/platform.h"
#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

namespace dxshim {

// platform.h's signature: the Windows one keeps `on_client`.
// NOLINTBEGIN(performance-unnecessary-value-param)
std::unique_ptr<PipeBridges> PipeBridges::ForServe(
    ProxyOptions& /*options*/, const std::string& /*sddl*/,
    std::function<void(const std::string& program)> /*on_client*/, CriCallers* /*callers*/) {
  return std::make_unique<PipeBridges>();
}
// NOLINTEND(performance-unnecessary-value-param)

std::unique_ptr<PipeBridges> PipeBridges::ForDialing(Endpoint& /*target*/) {
  return std::make_unique<PipeBridges>();
}

bool WindowsNode() { return false; }

bool Elevated() { return geteuid() == 0; }

Utf8Console::Utf8Console() = default;
Utf8Console::~Utf8Console() = default;

std::string InstalledConfigPath() { return config::kInstalledLinuxConfig; }

int RunServeProcess(const std::function<int(const std::function<void()>& ready)>& serve,
                    const std::function<void()>& /*stop*/,
                    std::chrono::milliseconds /*stop_wait*/) {
  return serve([] {});
}

int ReportFailedStart(int code, const std::vector<std::string>& /*args*/) { return code; }

bool FollowParent(long parent) {
#ifdef __linux__
  // The signal only covers a death after this call: serve may already be gone, and then
  // getppid() is no longer its pid.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  return static_cast<long>(::getppid()) == parent;
#else
  (void)parent;
  return true;
#endif
}

bool WaitForNotifications(const std::atomic<bool>& stopping, const std::function<void()>& changed) {
  char bytes[256];
  while (!stopping) {
    pollfd p{0, POLLIN, 0};
    const int ready = ::poll(&p, 1, 250);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return false;
    if (ready == 0) continue;
    const auto n = ::read(0, bytes, sizeof bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    changed();
  }
  return false;
}

int RunNvidiaUuids(const std::vector<std::string>& /*args*/) {
  std::fputs("dxshim nvidia-uuids: runs on Windows nodes only (it asks nvcuda.dll and nvml.dll)\n",
             stderr);
  return 2;
}

void UseBinaryStandardStreams() {}  // "\n" is written as it is

void EndProcessNow(int code) { std::_Exit(code); }

}  // namespace dxshim
