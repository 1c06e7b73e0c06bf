// powershell.exe (and pwsh.exe): Windows PowerShell 5.1's command line, read as its
// CommandLineParameterParser does, and the script or command run by the stand-in's interpreter.
#include <windows.h>

#include <string>
#include <vector>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_windows_host.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;

namespace {

// Whether ARG (after its - or /) is the switch NAME or an abbreviation of it at least as long
// as SHORTEST, as powershell.exe's MatchSwitch accepts them.
bool Switch(const std::wstring& arg, const std::wstring& name, std::size_t shortest) {
  if (arg.size() < 2 || (arg[0] != L'-' && arg[0] != L'/')) return false;
  const std::wstring given = Lower(arg.substr(1));
  return given.size() >= shortest && given.size() <= name.size() &&
         name.compare(0, given.size(), given) == 0;
}

}  // namespace

int PowerShell(const std::vector<std::wstring>& args) {
  const std::wstring log = FolderOf(SelfPath()) + L"\\powershell.log";
  LogStart(L"powershell.log");
  powershell::WindowsHost host;
  powershell::Interpreter interpreter(host);
  std::string file;
  std::vector<std::string> file_args;
  std::string command;
  bool has_command = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::wstring& arg = args[i];
    if (Switch(arg, L"noprofile", 3) || Switch(arg, L"nologo", 3) ||
        Switch(arg, L"noninteractive", 4) || Switch(arg, L"noexit", 3) || Switch(arg, L"sta", 1) ||
        Switch(arg, L"mta", 3)) {
      continue;
    }
    if (Switch(arg, L"executionpolicy", 2) || Switch(arg, L"ep", 2) ||
        Switch(arg, L"windowstyle", 1) || Switch(arg, L"inputformat", 3) ||
        Switch(arg, L"outputformat", 1)) {
      ++i;  // its value
      continue;
    }
    if (Switch(arg, L"file", 1)) {
      if (i + 1 >= args.size()) {
        host.WriteError("Missing the argument to -File.\r\n");
        return -196608;
      }
      file = Utf8FromWide(args[++i].c_str());
      while (++i < args.size()) file_args.push_back(Utf8FromWide(args[i].c_str()));
      break;
    }
    const bool explicit_command = Switch(arg, L"command", 1);
    if (explicit_command || (arg[0] != L'-' && arg[0] != L'/')) {
      // -Command, or the first word that is no switch: the rest is the command text.
      for (std::size_t k = explicit_command ? i + 1 : i; k < args.size(); ++k) {
        if (!command.empty()) command += " ";
        command += Utf8FromWide(args[k].c_str());
      }
      has_command = true;
      break;
    }
    host.WriteError("powershell stand-in: the switch " + Utf8FromWide(arg.c_str()) +
                    " is not implemented\r\n");
    AppendLine(log, "not-implemented " + std::to_string(GetCurrentProcessId()) + " switch " +
                        Utf8FromWide(arg.c_str()));
    return powershell::kNotImplementedExitCode;
  }
  int code = 0;
  if (!file.empty()) {
    if (file.size() < 4 || !powershell::EqualsNoCase(file.substr(file.size() - 4), ".ps1")) {
      host.WriteError("Processing -File '" + file +
                      "' failed because the file does not have a '.ps1' extension.\r\n");
      code = -196608;
    } else {
      code = interpreter.RunFile(file, file_args);
    }
  } else if (has_command) {
    code = interpreter.RunCommand(command);
  } else {
    host.WriteError("powershell stand-in: an interactive session is not implemented\r\n");
    code = powershell::kNotImplementedExitCode;
  }
  if (!interpreter.NotImplementedMessage().empty()) {
    AppendLine(log, "not-implemented " + std::to_string(GetCurrentProcessId()) + " " +
                        interpreter.NotImplementedMessage());
  }
  AppendLine(log, "exit " + std::to_string(GetCurrentProcessId()) + " " + std::to_string(code));
  return code;
}

}  // namespace dxshim::test::node_standin
