// rke2.exe: starts containerd.exe and kubelet.exe (with its config.yaml's kubelet-arg items).
#include <windows.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/child_process.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/rke2_config.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

// rke2's files: the config file, then the *.yaml and *.yml files of `<it>.d` in name order
// (k3s pkg/configfilearg dotDFiles); a missing one is skipped.
std::vector<std::string> ConfigFiles(const std::wstring& config) {
  std::vector<std::string> files;
  if (const auto text = ReadTextFile(config)) files.push_back(*text);
  std::vector<std::wstring> names;
  WIN32_FIND_DATAW found{};
  const HANDLE find = FindFirstFileW((config + L".d\\*").c_str(), &found);
  if (find != INVALID_HANDLE_VALUE) {
    do {
      const std::wstring name = found.cFileName;
      if (!(found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) &&
          (EndsWithNoCase(name, L".yaml") || EndsWithNoCase(name, L".yml")))
        names.push_back(name);
    } while (FindNextFileW(find, &found));
    FindClose(find);
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (const auto text = ReadTextFile(config + L".d\\" + name)) files.push_back(*text);
  }
  return files;
}

// rke2's kubelet command line: rke2's own values (its embedded containerd's pipe, k3s
// pkg/agent/config/config_windows.go; the node-label items joined, pkg/daemons/agent/
// agent_windows.go) with the kubelet-arg items by GetArgs. (rke2's other defaults, such as
// --file-check-frequency, are left out.)
std::wstring Rke2KubeletCommand(const std::wstring& folder, const std::vector<std::string>& files) {
  std::string labels;
  for (const auto& label : MergedList(files, "node-label")) {
    labels += (labels.empty() ? "" : ",") + label;
  }
  std::wstring command = L"\"" + folder + L"\\kubelet.exe\"";
  for (const auto& arg :
       KubeletArgs({{"container-runtime-endpoint", "npipe:////./pipe/containerd-containerd"},
                    {"node-labels", labels}},
                   MergedList(files, "kubelet-arg")))
    command += L" " + QuoteArgument(Widen(arg));
  return command;
}

// A rooted path (one leading / or \: rke2's default /etc/rancher/rke2/config.yaml, which
// `rke2 agent service --add` writes on the service's command line) names the drive of the current
// directory, as Windows resolves it: the system drive for a service, whose current directory is
// %SystemRoot%\system32. Made explicit because wine reads a path that starts with / as a Unix one.
std::wstring OnCurrentDrive(std::wstring path) {
  const auto slash = [](wchar_t c) { return c == L'/' || c == L'\\'; };
  if (path.empty() || !slash(path[0]) || (path.size() > 1 && slash(path[1]))) return path;
  wchar_t current[MAX_PATH] = {};
  const DWORD length = GetCurrentDirectoryW(MAX_PATH, current);
  const std::wstring drive = length >= 2 && current[1] == L':'
                                 ? std::wstring(current, 2)
                                 : ExpandEnvironment(L"%SystemDrive%");
  std::replace(path.begin(), path.end(), L'/', L'\\');
  return drive + path;
}

}  // namespace

DWORD Rke2(const std::wstring&, const std::function<void()>& ready) {
  const std::wstring folder = FolderOf(SelfPath());
  const std::wstring log = folder + L"\\rke2-starts.log";
  const auto fail = [&log](const std::string& why) {
    AppendLine(log, "error " + why);
    return DWORD{2};
  };
  const auto args = SplitCommandLine(GetCommandLineW());
  // rke2's default (k3s pkg/cli/cmds/config.go ConfigFlag); none there: its defaults.
  const std::wstring config = OnCurrentDrive(
      FlagValue(args, {L"--config", L"-c"}).value_or(L"/etc/rancher/rke2/config.yaml"));
  const std::wstring kubelet = Rke2KubeletCommand(folder, ConfigFiles(config));
  // containerd's --config only when the file exists (containerd refuses a --config it cannot
  // read; without one it serves its default pipe).
  std::wstring containerd = L"\"" + folder + L"\\containerd.exe\"";
  const std::wstring toml = folder + L"\\containerd.toml";
  if (GetFileAttributesW(toml.c_str()) != INVALID_FILE_ATTRIBUTES)
    containerd += L" --config " + QuoteArgument(toml);

  DWORD error = 0;
  const auto containerd_child = StartChild(containerd, L"", error);
  if (!containerd_child) {
    return fail("cannot start " + Utf8FromWide(containerd.c_str()) + " (error " +
                std::to_string(error) + ")");
  }
  const auto kubelet_child = StartChild(kubelet, L"", error);
  if (!kubelet_child) {
    EndChild(containerd_child->hProcess);
    return fail("cannot start " + Utf8FromWide(kubelet.c_str()) + " (error " +
                std::to_string(error) + ")");
  }
  AppendLine(log, "start " + std::to_string(kubelet_child->dwProcessId) + " " +
                      Utf8FromWide(kubelet.c_str()));
  ready();
  const auto ended = Supervise({containerd_child->hProcess, kubelet_child->hProcess});
  if (!ended) return 0;
  AppendLine(log, std::string("error ") + (ended->index == 0 ? "containerd.exe" : "kubelet.exe") +
                      " ended with exit code " + std::to_string(ended->exit_code));
  return ended->exit_code;
}

}  // namespace dxshim::test::node_standin
