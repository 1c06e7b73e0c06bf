// What the PowerShell stand-in's interpreter asks of the operating system: files, the
// environment, the clock, programs and the service control manager. Windows implements it
// (powershell_windows_host.cpp, run under wine); the unit test has a fake. Paths and text are
// UTF-8; paths are passed as the script wrote them (the host resolves relative ones against the
// current directory, as Windows does).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin::powershell {

enum class PathKind { kNone, kFile, kDirectory };

// A service as Get-Service shows one (System.ServiceProcess.ServiceController).
struct ServiceInfo {
  bool exists = false;
  std::string name;  // the service's own name, as the SCM spells it
  std::string display_name;
  std::string status;     // Stopped, StartPending, StopPending, Running, ContinuePending, ...
  bool can_stop = false;  // SERVICE_ACCEPT_STOP
};

// A program the interpreter started (an external command, or [RunProcess.exec]::RunProcess).
struct ProgramRun {
  bool started = false;
  std::uint32_t error = 0;  // GetLastError() when it did not start
  std::int64_t exit_code = 0;
  std::string output;  // its standard output, when captured
};

class Host {
 public:
  virtual ~Host() = default;

  // Files.
  virtual std::optional<std::string> ReadFile(const std::string& path) = 0;
  virtual bool WriteFile(const std::string& path, const std::string& bytes, bool append,
                         std::string& error) = 0;
  virtual PathKind KindOf(const std::string& path) = 0;
  virtual bool MakeDirectory(const std::string& path, std::string& error) = 0;  // with parents
  virtual bool RemovePath(const std::string& path, bool recurse, std::string& error) = 0;
  virtual std::string FullPath(const std::string& path) = 0;
  virtual std::string CurrentDirectory() = 0;
  // Copy-Item and Move-Item of one file, replacing TO (a running program can be moved, not
  // overwritten, as on Windows).
  virtual bool CopyPath(const std::string& from, const std::string& to, std::string& error) = 0;
  virtual bool MovePath(const std::string& from, const std::string& to, std::string& error) = 0;
  // The names in a folder (files and folders, without . and ..), sorted; none when it is not one.
  virtual std::vector<std::string> ListDirectory(const std::string& path) = 0;
  // A file's SHA-256 in upper-case hex, as Get-FileHash gives it; nothing when it cannot be read.
  virtual std::optional<std::string> FileSha256(const std::string& path) = 0;
  // The owner of a file or folder as a SID string (S-1-5-32-544); nothing when it cannot be read.
  virtual std::optional<std::string> OwnerSid(const std::string& path) = 0;
  // The Windows version as [Environment]::OSVersion.Version prints it (10.0.20348.0).
  virtual std::string OsVersion() = 0;

  // Environment variables (names without case, as Windows'). Setting nothing removes one.
  virtual std::optional<std::string> GetEnvironment(const std::string& name) = 0;
  virtual void SetEnvironment(const std::string& name, const std::optional<std::string>& value) = 0;

  // The local time as Get-Date -Format o writes it (yyyy-MM-ddTHH:mm:ss.fffffffzzz).
  virtual std::string RoundTripNow() = 0;
  virtual void Sleep(std::chrono::milliseconds duration) = 0;

  // The full path of the program NAME as Windows' search finds it: NAME itself when it has a
  // folder, else the folders of PATH, trying NAME and NAME with each PATHEXT extension.
  virtual std::optional<std::string> FindProgram(const std::string& name) = 0;
  // Runs COMMAND_LINE (CreateProcess, its program the first word) in DIRECTORY ("" the current
  // one) and waits for it. CAPTURE: its standard output is read into `output` (else it writes to
  // this process's own). ABOVE_NORMAL: ABOVE_NORMAL_PRIORITY_CLASS once started.
  virtual ProgramRun Run(const std::string& command_line, const std::string& directory,
                         bool capture, bool above_normal) = 0;

  // The service control manager. Codes are Win32 errors (0: done).
  virtual ServiceInfo QueryService(const std::string& name) = 0;
  // The services that depend on NAME (EnumDependentServices: running or not).
  virtual std::vector<std::string> DependentServices(const std::string& name) = 0;
  virtual std::uint32_t StartNamedService(const std::string& name) = 0;
  virtual std::uint32_t StopNamedService(const std::string& name) = 0;  // ControlService(STOP)

  // The console: the success output rendered for the host, and the error stream.
  virtual void WriteOutput(const std::string& text) = 0;
  virtual void WriteError(const std::string& text) = 0;
};

}  // namespace dxshim::test::node_standin::powershell
