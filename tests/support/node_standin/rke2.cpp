// rke2.exe: starts containerd.exe and kubelet.exe (with its config.yaml's kubelet-arg items).
#include <windows.h>

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

// rke2's kubelet command line: rke2's own defaults (the runtime endpoint of its embedded
// containerd, k3s pkg/agent/config/config_windows.go), each replaced by the user's kubelet-arg
// items of the same name (k3s pkg/util/args.go GetArgs: a leading `--` dropped, an item without
// `=` is name=true), then one `--name=value` per item, in the file's order. (GetArgs sorts them
// by name and handles `name+=`/`name-=`; the stand-in does neither.)
std::wstring Rke2KubeletCommand(const std::wstring& folder, const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::string>> args;
  for (std::string item : items) {
    if (item.rfind("--", 0) == 0) item.erase(0, 2);
    const auto equals = item.find('=');
    args.emplace_back(item.substr(0, equals),
                      equals == std::string::npos ? "true" : item.substr(equals + 1));
  }
  const std::vector<std::pair<std::string, std::string>> defaults = {
      {"container-runtime-endpoint", "npipe:////./pipe/containerd-containerd"}};
  std::wstring command = L"\"" + folder + L"\\kubelet.exe\"";
  for (const auto& [name, value] : defaults) {
    bool replaced = false;
    for (const auto& arg : args) replaced = replaced || arg.first == name;
    if (!replaced) command += L" " + QuoteArgument(Widen("--" + name + "=" + value));
  }
  for (const auto& [name, value] : args)
    command += L" " + QuoteArgument(Widen("--" + name + "=" + value));
  return command;
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
  // rke2's default /etc/rancher/rke2/config.yaml is on the system drive; none: its defaults.
  const std::wstring config =
      FlagValue(args, {L"--config", L"-c"})
          .value_or(ExpandEnvironment(L"%SystemDrive%\\etc\\rancher\\rke2\\config.yaml"));
  const auto yaml = ReadTextFile(config);
  const std::wstring kubelet =
      Rke2KubeletCommand(folder, yaml ? KubeletArgItems(*yaml) : std::vector<std::string>{});
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
