// What the commands do differently on Windows, in one place (platform_posix.cpp,
// platform_windows.cpp), so that serve_command.cpp and device_plugin_command.cpp read the same on
// both: named pipes bridged to loopback TCP (shim/windows/pipe_transport.h), the service control
// manager, how the plugin child follows its parent and reads serve's notifications.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shim/proxy/cri_callers.h"
#include "shim/proxy/endpoint.h"
#include "shim/proxy/proxy_server.h"
#include "shim/socket_bridge/socket_pair.h"

namespace dxshim {

inline constexpr std::chrono::seconds kPipeFreeWait{30};

// Windows: the named pipes among the endpoints bridged (kubelet's pipe: each connection handed to
// the relay's gRPC server, which then listens on no port; the runtime's: through a loopback
// forwarder, the endpoint rewritten to it). Elsewhere: nothing to do.
class PipeBridges {
 public:
  // For serve: kubelet's pipe (only calls that came through it are admitted) and the runtime's.
  // Throws std::exception naming what cannot be served.
  // `on_client` is told the program of each connection to kubelet's pipe, and `callers` counts
  // each admitted call for the pipe client it came from (Windows only). The pipe waits up to
  // kPipeFreeWait for another process to let it go (a takeover's containerd, stopping).
  static std::unique_ptr<PipeBridges> ForServe(
      ProxyOptions& options, const std::string& sddl,
      std::function<void(const std::string& program)> on_client = nullptr,
      CriCallers* callers = nullptr);
  // For a program that only dials (the device plugin, doctor): `target`'s pipe, reached through
  // a loopback forwarder only this process may use (nothing is listened on).
  static std::unique_ptr<PipeBridges> ForDialing(Endpoint& target);
  virtual ~PipeBridges() = default;
  // Once the relay serves: the pipe opens, each connection given to the relay by `hand`.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): the Windows override keeps it
  virtual void Listen(socket_bridge::HandToServer /*hand*/) {}
  virtual void Stop() {}
  // Whether `callers` learns the program of each client (Windows, serving a named pipe).
  virtual bool KnowsCallers() const { return false; }
};

// Runs `serve` as the Windows service "dxshim" when the service control manager started this
// process (RUNNING once `serve` calls its ready callback; a service stop calls `stop`; `stop_wait`
// is the wait hint), else in the console. Elsewhere: `serve` directly.
int RunServeProcess(const std::function<int(const std::function<void()>& ready)>& serve,
                    const std::function<void()>& stop, std::chrono::milliseconds stop_wait);

// Serve's configuration did not load (exit `code`). Windows: when the service control manager
// started this process, that is reported to it (STOPPED with this code as the service-specific
// error, never RUNNING) instead of leaving it to time out; --check and --help are for a console
// and skip the attempt. Returns the exit code.
int ReportFailedStart(int code, const std::vector<std::string>& args);

// The plugin child: stop (SIGTERM) when serve, process `parent`, is gone, even by SIGKILL. False
// when it already is. (Windows: serve closes the child's input; always true.)
bool FollowParent(long parent);

// Calls `changed` for each batch of bytes on the process's stdin until its end (serve closed it:
// returns true) or `stopping` (checked every 250 ms).
bool WaitForNotifications(const std::atomic<bool>& stopping, const std::function<void()>& changed);

// Whether this build runs on Windows nodes (containerd's Windows CRI is behind the runtime).
bool WindowsNode();

// Whether this process may read what an operator's checks need: root (Linux), a member of
// Administrators with an elevated token (Windows).
bool Elevated();

// The configuration file the installed service reads (config/serve_defaults.h names both), with
// %ProgramData% expanded on Windows.
std::string InstalledConfigPath();

// While it lives, the console shows what is printed as UTF-8 (Windows: its output code page, put
// back as it was after; elsewhere nothing to do): doctor's marks are ✓ and ✗.
class Utf8Console {
 public:
  Utf8Console();
  ~Utf8Console();  // NOLINT(performance-trivially-destructible): restores it on Windows
  Utf8Console(const Utf8Console&) = delete;
  Utf8Console& operator=(const Utf8Console&) = delete;

 private:
  [[maybe_unused]] unsigned previous_ = 0;  // Windows: the code page before
};

// Standard output and error write the same bytes on every platform: '\n', not the C runtime's
// "\r\n" (Windows: binary mode; elsewhere nothing to do). The JSON `rewrite` prints is compared
// byte for byte with the Linux build's; readers accept either.
void UseBinaryStandardStreams();

// Ends this process at once with exit code `code`, as if killed (Windows: TerminateProcess;
// elsewhere _exit): nothing else runs on the way out.
[[noreturn]] void EndProcessNow(int code);

// The hidden command `dxshim nvidia-uuids cuda | nvml BUSID...`: the short-lived child in which
// Windows discovery asks CUDA and NVML (devices/windows/nvidia_query.h), so that serve never loads
// their DLLs. Elsewhere: refused (exit 2), it runs on Windows nodes only.
int RunNvidiaUuids(const std::vector<std::string>& args);

}  // namespace dxshim
