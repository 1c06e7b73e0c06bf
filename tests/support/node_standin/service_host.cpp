// EKS-WindowsServiceHost.exe: runs the rest of its own command line as its child.
#include <windows.h>

#include <cstddef>
#include <functional>
#include <string>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/child_process.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/roles.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;

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

}  // namespace dxshim::test::node_standin
