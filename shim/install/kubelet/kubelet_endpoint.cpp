#include "shim/install/kubelet/kubelet_endpoint.h"

#include "shim/install/edit/config_file_edit.h"
#include "shim/install/edit/kubelet_flags.h"

namespace dxshim::install {
namespace {

// A UNC or device path (\\server\share, \\.\pipe\x) is not kubelet's own file, and opening or
// listing it as Administrator would hand whoever serves it the caller's credentials, or block.
void RefuseRemote(const std::string& path, const char* what) {
  const bool long_local = path.size() > 5 && path.starts_with("\\\\?\\") && path[5] == ':';
  if ((path.starts_with("\\\\") || path.starts_with("//")) && !long_local) {
    throw NodeError(std::string("kubelet's ") + what + " " + path + " is not a local file");
  }
}

}  // namespace

Setting KubeletEndpoint(const std::vector<Word>& words, const KubeletFiles& files) {
  if (const auto flag = FindFlag(words, "container-runtime-endpoint", 1)) {
    return {flag->value, SettingPlace::kServiceCommandLine, "--container-runtime-endpoint"};
  }
  std::optional<Setting> found;
  const auto read = [&](const std::string& path, SettingPlace place) {
    RefuseRemote(path, "config file");
    const auto text = files.read(path);
    if (!text) throw NodeError("kubelet's config file " + path + " does not exist");
    try {
      if (auto value = ReadTopLevelString(*text, "containerRuntimeEndpoint")) {
        found = Setting{*value, place, path};
      }
    } catch (const std::exception& e) {
      throw NodeError("kubelet's config file " + path + ": " + e.what());
    }
  };
  if (const auto config = FindFlag(words, "config", 1)) {
    read(files.resolve(config->value), SettingPlace::kConfigFile);
  }
  if (const auto dir = FindFlag(words, "config-dir", 1)) {
    const std::string folder = files.resolve(dir->value);
    RefuseRemote(folder, "config folder");  // listing a share sends credentials too
    for (const auto& name : files.list(folder)) {
      if (name.size() > 5 && name.substr(name.size() - 5) == ".conf") {
        read(folder + files.separator + name, SettingPlace::kConfigDropIn);
      }
    }
  }
  return found.value_or(Setting{kKubeletDefaultEndpoint, SettingPlace::kDefault, ""});
}

std::vector<Word> WordsOf(const std::vector<std::string>& args) {
  std::vector<Word> words;
  words.reserve(args.size());
  for (const auto& a : args) words.push_back(Word{a, 0, 0, false});
  return words;
}

}  // namespace dxshim::install
