// kube-log-runner.exe: kubernetes' log runner (kubernetes/component-base 349fbe06
// logs/kube-log-runner/kube-log-runner.go): its own flags parsed with Go's flag package, then the
// rest of its command line run as its child, its output appended to --log-file.
#include <windows.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/child_process.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/go_command_line.h"
#include "tests/support/node_standin/roles.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

// kube-log-runner.go initFlags.
const std::vector<GoFlag> kFlags = {{"flush-interval"},    {"log-file"},
                                    {"log-file-size"},     {"log-file-age"},
                                    {"also-stdout", true}, {"redirect-stderr", true}};

// exec.LookPath on Windows, as far as a stand-in needs it: a path is taken as it is (or with
// .exe when it has no extension), a bare name is searched for along PATH.
std::wstring LookPath(const std::wstring& program) {
  if (program.find_first_of(L"\\/:") != std::wstring::npos) {
    const auto name = FileNameOf(program);
    return name.find(L'.') == std::wstring::npos ? program + L".exe" : program;
  }
  std::wstring found(MAX_PATH, L'\0');
  const DWORD n = SearchPathW(nullptr, program.c_str(), L".exe", MAX_PATH, found.data(), nullptr);
  return n > 0 && n < MAX_PATH ? found.substr(0, n) : program;
}

}  // namespace

DWORD KubeLogRunner(const std::wstring&, const std::function<void()>& ready) {
  const std::wstring log = FolderOf(SelfPath()) + L"\\kube-log-runner-starts.log";
  const auto wide = SplitCommandLine(GetCommandLineW());
  std::vector<std::string> args;
  for (std::size_t i = 1; i < wide.size(); ++i) args.push_back(Utf8FromWide(wide[i].c_str()));
  const GoFlagParse parsed = ParseGoFlags(args, kFlags);
  if (parsed.help) return 0;    // flag.ExitOnError: -h prints the usage and exits 0
  if (!parsed.error.empty()) {  // ... and any other error exits 2
    std::fprintf(stderr, "%s\n", parsed.error.c_str());
    AppendLine(log, "error " + parsed.error);
    return 2;
  }
  const auto fatal = [&log](const std::string& why) {  // log.Fatal: exit code 1
    std::fprintf(stderr, "%s\n", why.c_str());
    AppendLine(log, "error " + why);
    return DWORD{1};
  };
  if (parsed.rest.empty()) return fatal("not enough arguments to run");

  // os.OpenFile(path, O_APPEND|O_CREATE|O_WRONLY): the child's output appended, its folder not
  // made. -redirect-stderr (default true) sends its standard error there too. (-also-stdout is
  // accepted, but only the file gets the output.)
  HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE);
  HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
  HANDLE file = INVALID_HANDLE_VALUE;
  const auto log_file = parsed.values.find("log-file");
  if (log_file != parsed.values.end() && !log_file->second.empty()) {
    SECURITY_ATTRIBUTES inherit{sizeof(inherit), nullptr, TRUE};
    file = CreateFileW(OnTheCurrentDrive(Widen(log_file->second)).c_str(), FILE_APPEND_DATA,
                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &inherit,
                       OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) {
      return fatal("failed to create log file " + log_file->second + ": error " +
                   std::to_string(GetLastError()));
    }
    out = file;
  }
  const auto redirect = parsed.values.find("redirect-stderr");
  if (redirect == parsed.values.end() || redirect->second == "true") err = out;

  // exec.Command(args[0], args[1:]...): the program looked up, the command line made anew from
  // the arguments (syscall makeCmdLine), not the one kube-log-runner was given.
  const std::wstring program = LookPath(Widen(parsed.rest[0]));
  std::wstring command = Widen(GoCommandLine(parsed.rest));
  STARTUPINFOW startup{};
  startup.cb = sizeof(startup);
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = out;
  startup.hStdError = err;
  PROCESS_INFORMATION child{};
  const BOOL started =
      CreateProcessW(program.c_str(), command.data(), nullptr, nullptr, TRUE,
                     CREATE_UNICODE_ENVIRONMENT, nullptr, nullptr, &startup, &child);
  if (file != INVALID_HANDLE_VALUE) CloseHandle(file);
  if (!started) {
    return fatal("starting command: " + Utf8FromWide(program.c_str()) + ": error " +
                 std::to_string(GetLastError()));
  }
  CloseHandle(child.hThread);
  AppendLine(log,
             "start " + std::to_string(child.dwProcessId) + " " + Utf8FromWide(command.c_str()));
  ready();
  const auto ended = Supervise({child.hProcess});  // STOP ends the child
  if (!ended || ended->exit_code == 0) return 0;
  return fatal("running command: exit status " + std::to_string(ended->exit_code));
}

}  // namespace dxshim::test::node_standin
