// What `dxshim install` reads and changes on a node, as one interface: the registry, files, the
// service control manager, the running processes and the named pipes. shim/windows implements it
// with Win32 (windows_node_system.h); the installer's logic above it is portable, so the unit
// tests run it against an in-memory node and the wine tests against wine's real registry and
// service manager.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dxshim::install {

// A failure to read or change the node, naming what and why.
struct NodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A string registry value and its type (REG_SZ or REG_EXPAND_SZ), which a write keeps.
struct RegistryString {
  std::string data;
  bool expand = false;  // REG_EXPAND_SZ
  bool operator==(const RegistryString&) const = default;
};

struct ServiceState {
  std::string command_line;               // the service's ImagePath, as the manager holds it
  std::vector<std::string> dependencies;  // services it depends on (no groups)
  bool running = false;                   // RUNNING (START_PENDING counts as not yet)
  std::uint32_t pid = 0;                  // 0 when stopped
};

struct ServiceSpec {
  std::string name;
  std::string display_name;
  std::string command_line;
  std::vector<std::string> dependencies;
  bool operator==(const ServiceSpec&) const = default;
};

struct ProcessInfo {
  std::uint32_t pid = 0;
  std::string program;       // the executable's file name, e.g. kubelet.exe
  std::string command_line;  // as the process was started (its PEB), empty when unreadable
};

class NodeSystem {
 public:
  virtual ~NodeSystem() = default;

  // HKEY_LOCAL_MACHINE\<key> value `name`; nullopt when the key or value is missing. Throws
  // NodeError when it exists with another type.
  virtual std::optional<RegistryString> ReadRegistry(const std::string& key,
                                                     const std::string& name) = 0;
  virtual void WriteRegistry(const std::string& key, const std::string& name,
                             const RegistryString& value) = 0;

  // A file's bytes; nullopt when it does not exist. Throws NodeError when it cannot be read.
  virtual std::optional<std::string> ReadFile(const std::string& path) = 0;
  // Replaces the whole file (written next to it, then moved over it).
  virtual void WriteFile(const std::string& path, const std::string& bytes) = 0;
  virtual void RemoveFile(const std::string& path) = 0;  // a missing file is no error
  // Why an existing file cannot be trusted to say what to write where as SYSTEM ("owned by
  // S-1-5-21-...-1001"), or "" when its owner is SYSTEM, Administrators or this process's own
  // user. A file under %ProgramData% can be made by any local user before dxshim's folder exists.
  virtual std::string UntrustedOwner(const std::string& path) = 0;
  // The names of the files in a folder (not sub-folders), sorted; empty when it does not exist.
  virtual std::vector<std::string> ListFiles(const std::string& folder) = 0;

  virtual std::optional<ServiceState> Service(const std::string& name) = 0;
  virtual void RegisterService(const ServiceSpec& spec) = 0;  // automatic start, restart on failure
  virtual void UnregisterService(const std::string& name) = 0;
  // Through the service control manager (which keeps its own copy: a registry edit of ImagePath
  // is seen only after a reboot).
  virtual void SetServiceCommandLine(const std::string& name, const std::string& command_line) = 0;
  virtual void SetServiceDependencies(const std::string& name,
                                      const std::vector<std::string>& dependencies) = 0;
  // Both wait until the service reached the state, or throw NodeError after `timeout`.
  virtual void StartAndWait(const std::string& name, std::chrono::milliseconds timeout) = 0;
  virtual void StopAndWait(const std::string& name, std::chrono::milliseconds timeout) = 0;
  // Asks the service manager to start the service and returns at once (it may stay START_PENDING
  // for a while: dxshim waiting for its pipe to be free). A service already running: nothing.
  virtual void RequestStart(const std::string& name) = 0;

  virtual std::vector<ProcessInfo> Processes() = 0;
  // The process serving the named pipe (\\.\pipe\NAME), nullopt when nothing serves it.
  virtual std::optional<std::uint32_t> PipeServer(const std::string& pipe_path) = 0;
  virtual void Sleep(std::chrono::milliseconds duration) = 0;
  // The wall clock, in milliseconds since the Unix epoch (dxshim's own records use it too).
  virtual std::int64_t NowUnixMs() = 0;
  // `text` with %NAME% environment variables expanded, as the service manager does for a
  // REG_EXPAND_SZ command line.
  virtual std::string ExpandEnvironment(const std::string& text) = 0;
};

}  // namespace dxshim::install
