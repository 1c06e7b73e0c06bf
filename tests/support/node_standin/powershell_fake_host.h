// An in-memory Host for the interpreter's unit test: files, environment, programs (whose runs it
// records, with canned output) and a service control manager that behaves as Windows' does
// (StartService starts the dependencies first; stopping a service whose dependents run fails
// with ERROR_DEPENDENT_SERVICES_RUNNING).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/node_standin/powershell_host.h"
#include "tests/support/node_standin/powershell_interpreter.h"

namespace dxshim::test::node_standin::powershell {

class FakeHost : public Host {
 public:
  struct Service {
    std::string status = "Stopped";
    std::vector<std::string> depends_on;
  };
  struct Started {
    std::string command_line;
    std::string directory;
    bool capture = false;
    bool above_normal = false;
  };

  std::map<std::string, std::string, NoCaseLess> files;  // full path -> bytes
  std::set<std::string, NoCaseLess> directories;
  std::map<std::string, std::string, NoCaseLess> environment;
  std::string current_directory = "C:\\k";
  std::map<std::string, Service, NoCaseLess> services;
  std::vector<std::string> service_calls;  // "start NAME", "stop NAME"
  std::vector<Started> runs;
  // What a program (by file name, lower case) writes and exits with; ON_RUN sees its command.
  std::map<std::string, std::string> program_output;
  std::map<std::string, int> program_exit;
  std::function<void(const std::string& program, const std::string& command_line)> on_run;
  std::string out;
  std::string err;
  std::vector<std::chrono::milliseconds> sleeps;

  FakeHost();

  std::optional<std::string> ReadFile(const std::string& path) override;
  bool WriteFile(const std::string& path, const std::string& bytes, bool append,
                 std::string& error) override;
  PathKind KindOf(const std::string& path) override;
  bool MakeDirectory(const std::string& path, std::string& error) override;
  bool RemovePath(const std::string& path, bool recurse, std::string& error) override;
  std::string FullPath(const std::string& path) override;
  std::string CurrentDirectory() override { return current_directory; }
  bool CopyPath(const std::string& from, const std::string& to, std::string& error) override;
  bool MovePath(const std::string& from, const std::string& to, std::string& error) override;
  std::vector<std::string> ListDirectory(const std::string& path) override;
  // Not SHA-256: the bytes' length and std::hash, enough to tell files apart in a unit test.
  std::optional<std::string> FileSha256(const std::string& path) override;
  std::optional<std::string> OwnerSid(const std::string& path) override;
  std::string OsVersion() override { return "10.0.20348.0"; }
  std::optional<std::string> GetEnvironment(const std::string& name) override;
  void SetEnvironment(const std::string& name, const std::optional<std::string>& value) override;
  std::string RoundTripNow() override { return "2024-05-06T07:08:09.1234567+00:00"; }
  void Sleep(std::chrono::milliseconds duration) override { sleeps.push_back(duration); }
  std::optional<std::string> FindProgram(const std::string& name) override;
  ProgramRun Run(const std::string& command_line, const std::string& directory, bool capture,
                 bool above_normal) override;
  ServiceInfo QueryService(const std::string& name) override;
  std::vector<std::string> DependentServices(const std::string& name) override;
  std::uint32_t StartNamedService(const std::string& name) override;
  std::uint32_t StopNamedService(const std::string& name) override;
  void WriteOutput(const std::string& text) override { out += text; }
  void WriteError(const std::string& text) override { err += text; }

  // A file's text (UTF-16 decoded); a program that exists at PATH.
  std::string Text(const std::string& path);
  void AddProgram(const std::string& path) { files[path] = "MZ"; }
};

}  // namespace dxshim::test::node_standin::powershell
