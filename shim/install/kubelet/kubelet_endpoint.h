// The CRI endpoint a running kubelet uses, from its own arguments: the
// --container-runtime-endpoint flag, else containerRuntimeEndpoint in its --config-dir drop-ins
// (the last one that sets it), else in its --config file, else kubelet's default. The files are
// read through `KubeletFiles`, so that the same rule serves a Windows node (its registry and
// processes, kubelet_proof.h) and a Linux one (/proc, `dxshim doctor`).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "shim/install/edit/command_line.h"
#include "shim/install/kubelet/kubelet_launch.h"

namespace dxshim::install {

struct KubeletFiles {
  // The file's bytes, nullopt when it does not exist; throws NodeError when it cannot be read.
  std::function<std::optional<std::string>(const std::string& path)> read;
  // The names of the files in a folder, sorted.
  std::function<std::vector<std::string>(const std::string& folder)> list;
  // A path as kubelet's flag wrote it, as this program opens it.
  std::function<std::string(const std::string& path)> resolve;
  char separator = '/';
};

// `words`: kubelet's arguments, its program first. The setting's place is kServiceCommandLine
// for the flag (the process's own command line), kConfigDropIn, kConfigFile or kDefault; its
// path the file. Throws NodeError when a file it names is missing, not YAML, or not local (a UNC
// or device path: never opened).
Setting KubeletEndpoint(const std::vector<Word>& words, const KubeletFiles& files);

// Words for arguments that are already split (a Linux process's /proc/PID/cmdline).
std::vector<Word> WordsOf(const std::vector<std::string>& args);

}  // namespace dxshim::install
