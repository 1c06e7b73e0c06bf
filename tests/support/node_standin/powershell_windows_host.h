// The PowerShell stand-in's Host on Windows (run under wine): Win32 files, environment, clock,
// CreateProcess and the service control manager.
#pragma once

#include <string>

#include "tests/support/node_standin/powershell_host.h"

namespace dxshim::test::node_standin::powershell {

// PATH for a Win32 call: PowerShell's file system provider takes / for \ on Windows.
std::wstring Win32Path(const std::string& path);

class WindowsHost : public Host {
 public:
  std::optional<std::string> ReadFile(const std::string& path) override;
  bool WriteFile(const std::string& path, const std::string& bytes, bool append,
                 std::string& error) override;
  PathKind KindOf(const std::string& path) override;
  bool MakeDirectory(const std::string& path, std::string& error) override;
  bool RemovePath(const std::string& path, bool recurse, std::string& error) override;
  std::string FullPath(const std::string& path) override;
  std::string CurrentDirectory() override;
  // Copies, moves, listings, hashes, owners and the version: powershell_windows_items.cpp.
  bool CopyPath(const std::string& from, const std::string& to, std::string& error) override;
  bool MovePath(const std::string& from, const std::string& to, std::string& error) override;
  std::vector<std::string> ListDirectory(const std::string& path) override;
  std::optional<std::string> FileSha256(const std::string& path) override;
  std::optional<std::string> OwnerSid(const std::string& path) override;
  std::string OsVersion() override;
  std::optional<std::string> GetEnvironment(const std::string& name) override;
  void SetEnvironment(const std::string& name, const std::optional<std::string>& value) override;
  std::string RoundTripNow() override;
  void Sleep(std::chrono::milliseconds duration) override;
  std::optional<std::string> FindProgram(const std::string& name) override;
  ProgramRun Run(const std::string& command_line, const std::string& directory, bool capture,
                 bool above_normal) override;
  ServiceInfo QueryService(const std::string& name) override;
  std::vector<std::string> DependentServices(const std::string& name) override;
  std::uint32_t StartNamedService(const std::string& name) override;
  std::uint32_t StopNamedService(const std::string& name) override;
  void WriteOutput(const std::string& text) override;
  void WriteError(const std::string& text) override;
};

}  // namespace dxshim::test::node_standin::powershell
