// An in-memory Windows node for the installer's unit tests: registry values, files, services with
// start and stop counts, processes, pipes and a clock. A stand-in for what Linux cannot have (the
// registry and the service manager); the same installer runs against wine's real ones in
// tests/e2e/node_install_test.sh. The service manager's rules it keeps, as Windows documents
// them: a service starts its dependencies first (and cannot start when one does not exist), and
// cannot be stopped while a service that depends on it runs. `on_start` and `on_stop` play the
// launchers: they start and end processes (kubelet.exe with the command line its launcher builds)
// and serve pipes.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "shim/base/ascii_case.h"
#include "shim/install/system/node_system.h"

namespace dxshim::install::test {

class FakeNode : public NodeSystem {
 public:
  struct FakeService {
    ServiceState state;
    int starts = 0;
    int stops = 0;
  };

  std::map<std::string, RegistryString> registry;  // "KEY\\NAME" (lower case key)
  std::map<std::string, std::string> files;
  std::map<std::string, FakeService> services;  // lower-case name
  std::vector<ProcessInfo> processes;
  std::map<std::uint32_t, std::int64_t> started_at;  // pid -> NowUnixMs() at its start
  std::map<std::string, std::uint32_t> pipes;        // lower-case pipe path -> server pid
  std::map<std::string, std::string> untrusted;      // path -> why (a file a user made)
  std::function<void(FakeNode&, const std::string&)> on_start;
  std::function<void(FakeNode&, const std::string&)> on_stop;
  std::function<void(const std::string& path, const std::string& bytes)> on_write;
  std::uint32_t next_pid = 1000;
  std::int64_t now_ms = 1'700'000'000'000;

  static std::string RegistryName(const std::string& key, const std::string& name) {
    return ToLowerAscii(key) + "\\" + name;
  }
  void AddService(const std::string& name, const std::string& command_line,
                  std::vector<std::string> dependencies = {}, bool running = true) {
    auto& s = services[ToLowerAscii(name)];
    s.state.command_line = command_line;
    s.state.dependencies = std::move(dependencies);
    if (running) Run(ToLowerAscii(name), false);
  }
  FakeService& service(const std::string& name) { return services.at(ToLowerAscii(name)); }
  std::uint32_t StartProcess(const std::string& program, const std::string& command_line,
                             std::uint32_t pid = 0) {
    if (pid == 0) pid = next_pid++;
    processes.push_back({pid, program, command_line});
    started_at[pid] = now_ms;
    return pid;
  }
  void KillProgram(const std::string& program) {
    std::erase_if(processes, [&](const ProcessInfo& p) {
      return ToLowerAscii(p.program) == ToLowerAscii(program);
    });
  }

  std::optional<RegistryString> ReadRegistry(const std::string& key,
                                             const std::string& name) override {
    const auto it = registry.find(RegistryName(key, name));
    return it == registry.end() ? std::nullopt : std::optional(it->second);
  }
  void WriteRegistry(const std::string& key, const std::string& name,
                     const RegistryString& value) override {
    registry[RegistryName(key, name)] = value;
  }
  std::optional<std::string> ReadFile(const std::string& path) override {
    const auto it = files.find(path);
    return it == files.end() ? std::nullopt : std::optional(it->second);
  }
  void WriteFile(const std::string& path, const std::string& bytes) override {
    if (on_write) on_write(path, bytes);  // may throw NodeError, as a refused write does
    files[path] = bytes;
  }
  void RemoveFile(const std::string& path) override { files.erase(path); }
  std::string UntrustedOwner(const std::string& path) override {
    const auto it = untrusted.find(path);
    return it == untrusted.end() ? "" : it->second;
  }
  std::vector<std::string> ListFiles(const std::string& folder) override {
    std::vector<std::string> names;
    for (const auto& [path, bytes] : files) {
      if (path.rfind(folder + "\\", 0) == 0 &&
          path.find('\\', folder.size() + 1) == std::string::npos) {
        names.push_back(path.substr(folder.size() + 1));
      }
    }
    return names;
  }
  std::optional<ServiceState> Service(const std::string& name) override {
    const auto it = services.find(ToLowerAscii(name));
    return it == services.end() ? std::nullopt : std::optional(it->second.state);
  }
  void RegisterService(const ServiceSpec& spec) override {
    if (services.count(ToLowerAscii(spec.name)))
      throw NodeError("service " + spec.name + " exists");
    AddService(spec.name, spec.command_line, spec.dependencies, false);
  }
  void UnregisterService(const std::string& name) override {
    if (!services.erase(ToLowerAscii(name))) throw NodeError("no service " + name);
  }
  void SetServiceCommandLine(const std::string& name, const std::string& line) override {
    services.at(ToLowerAscii(name)).state.command_line = line;
  }
  void SetServiceDependencies(const std::string& name, const std::vector<std::string>& d) override {
    services.at(ToLowerAscii(name)).state.dependencies = d;
  }
  void StartAndWait(const std::string& name, std::chrono::milliseconds) override {
    const auto it = services.find(ToLowerAscii(name));
    if (it == services.end()) throw NodeError("no service " + name);
    if (it->second.state.running) return;
    for (const auto& d : std::vector<std::string>(it->second.state.dependencies)) {
      if (!services.count(ToLowerAscii(d))) {
        throw NodeError("cannot start " + name + ": its dependency " + d + " does not exist");
      }
      StartAndWait(d, std::chrono::milliseconds(0));
    }
    now_ms += 100;
    Run(ToLowerAscii(name), true);
  }
  void RequestStart(const std::string& name) override {
    StartAndWait(name, std::chrono::milliseconds(0));
  }
  void StopAndWait(const std::string& name, std::chrono::milliseconds) override {
    auto& s = services.at(ToLowerAscii(name));
    // The service manager refuses to stop a service whose dependents run.
    for (const auto& [other, o] : services) {
      if (!o.state.running) continue;
      for (const auto& d : o.state.dependencies) {
        if (ToLowerAscii(d) == ToLowerAscii(name)) {
          throw NodeError("cannot stop " + name + ": " + other + " depends on it and runs");
        }
      }
    }
    if (!s.state.running) return;
    now_ms += 100;
    s.state.running = false;
    const auto pid = s.state.pid;
    s.state.pid = 0;
    ++s.stops;
    if (on_stop) on_stop(*this, ToLowerAscii(name));
    std::erase_if(pipes, [&](const auto& p) { return p.second == pid; });
    std::erase_if(processes, [&](const ProcessInfo& p) { return p.pid == pid; });
  }
  std::vector<ProcessInfo> Processes() override { return processes; }
  std::optional<std::uint32_t> PipeServer(const std::string& pipe) override {
    const auto it = pipes.find(ToLowerAscii(pipe));
    return it == pipes.end() ? std::nullopt : std::optional(it->second);
  }
  void Sleep(std::chrono::milliseconds duration) override { now_ms += duration.count(); }
  std::int64_t NowUnixMs() override { return now_ms; }
  std::string ExpandEnvironment(const std::string& text) override {
    std::string out = text;
    for (const auto& [name, value] :
         std::map<std::string, std::string>{{"%SystemDrive%", "C:"},
                                            {"%ProgramData%", "C:\\ProgramData"},
                                            {"%ProgramFiles%", "C:\\Program Files"},
                                            {"%SystemRoot%", "C:\\Windows"},
                                            {"%COMPUTERNAME%", "WIN-NODE-7"}}) {
      // Names are matched regardless of case, as ExpandEnvironmentStrings does.
      for (auto at = ToLowerAscii(out).find(ToLowerAscii(name)); at != std::string::npos;
           at = ToLowerAscii(out).find(ToLowerAscii(name))) {
        out.replace(at, name.size(), value);
      }
    }
    return out;
  }

 private:
  void Run(const std::string& name, bool count) {
    auto& s = services.at(name);
    s.state.running = true;
    s.state.pid = StartProcess(name + "-service.exe", s.state.command_line);
    if (count) ++s.starts;
    if (on_start) on_start(*this, name);
  }
};

}  // namespace dxshim::install::test
