// libFuzzer target: how the installer finds kubelet's launch (FindKubeletLaunch,
// shim/install/kubelet/kubelet_launch.h) on the unit tests' in-memory node
// (tests/install/fake_node.h). The input is sections split at lines "%%": the kubelet service's
// command line ("rke2:" before it: the rke2 service's instead), NSSM's Application and
// AppParameters values, the launcher script (any .ps1 path; the file a launch reads as its script
// is checked as read), kubeadm-flags.env, kubelet's config file and drop-in (any other path; one
// drop-in in every folder listed), rke2's config file and drop-in. Properties:
//   - FindKubeletLaunch fails only with NodeError (a file or value it cannot read), never a crash
//     or another exception;
//   - an unknown launcher says why; a known one matches the service read: NSSM launchers when the
//     service runs nssm.exe, a native service when kubelet.exe is on its command line, rke2 for
//     the rke2 service;
//   - the runtime endpoint reported is one read where it says: the flag in the service's command
//     line, in AppParameters or in KUBELET_KUBEADM_ARGS (the last occurrence, as kubelet reads
//     it); `--container-runtime-endpoint=` written in the script; containerRuntimeEndpoint in
//     the config text; rke2's kubelet-arg items; or kubelet's or rke2's default; so are the node
//     name and labels when they come from a flag; a script path reported is a word of
//     AppParameters.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shim/base/ascii_case.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/config_file_edit.h"
#include "shim/install/edit/kubelet_flags.h"
#include "shim/install/edit/rke2_config.h"
#include "shim/install/kubelet/kubelet_launch.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/install/fake_node.h"

namespace {

namespace install = dxshim::install;
using dxshim::fuzz::Check;
using install::SettingPlace;

enum Section {
  kService,
  kApplication,
  kParameters,
  kScript,
  kFlagsFile,
  kConfig,
  kRke2Config,
  kSections
};

// FakeNode whose files are the input's sections by kind of path, wherever the launch looks.
class FuzzNode : public install::test::FakeNode {
 public:
  explicit FuzzNode(std::vector<std::string> sections) : sections_(std::move(sections)) {}
  std::optional<std::string> ReadFile(const std::string& path) override {
    const std::string lower = dxshim::ToLowerAscii(path);
    const auto ends = [&](std::string_view suffix) {
      return lower.size() >= suffix.size() && lower.ends_with(suffix);
    };
    if (ends(".ps1")) return sections_[kScript];
    if (ends("kubeadm-flags.env")) return sections_[kFlagsFile];
    if (lower.find("rancher") != std::string::npos) return sections_[kRke2Config];
    return sections_[kConfig];
  }
  std::vector<std::string> ListFiles(const std::string& folder) override {
    return {dxshim::ToLowerAscii(folder).find("rancher") != std::string::npos ? "50-operator.yaml"
                                                                              : "10-dropin.conf"};
  }

 private:
  std::vector<std::string> sections_;
};

std::optional<std::string> FlagIn(const std::vector<install::Word>& words, const char* name,
                                  std::size_t first) {
  const auto found = install::FindFlag(words, name, first);
  return found ? std::optional(found->value) : std::nullopt;
}

// Where a flag-borne setting may come from: the value `place` reads for flag `name`.
void CheckFlagSetting(FuzzNode& fuzz, const std::vector<std::string>& sections,
                      const install::KubeletLaunch& launch, const install::Setting& setting,
                      const char* name) {
  const std::string line = fuzz.ExpandEnvironment(sections[kService]);
  switch (setting.place) {
    case SettingPlace::kServiceCommandLine:
      Check(launch.launcher == install::Launcher::kNativeService &&
                FlagIn(install::SplitCommandLine(line), name, launch.first_flag) == setting.value,
            "a command-line setting is the service's flag");
      break;
    case SettingPlace::kNssmParameters:
      Check(FlagIn(install::SplitArguments(fuzz.ExpandEnvironment(sections[kParameters])), name,
                   0) == setting.value,
            "an AppParameters setting is its flag");
      break;
    case SettingPlace::kKubeadmFlagsFile: {
      const auto flags = install::ReadKubeadmFlags(sections[kFlagsFile]);
      Check(flags && FlagIn(install::SplitCommandLine(flags->args), name, 0) == setting.value,
            "a kubeadm-flags.env setting is its flag");
      break;
    }
    case SettingPlace::kScript: {
      // The text the node holds at the script's path (a script need not end in .ps1: the
      // launch takes the file AppParameters names, whatever its name).
      const auto script = fuzz.ReadFile(launch.script).value_or("");
      Check(
          dxshim::ToLowerAscii(script).find("--" + std::string(name) + "=") != std::string::npos ||
              script.rfind("\xFF\xFE", 0) == 0,
          "a script setting is written in the script");
      break;
    }
    case SettingPlace::kRke2Config:
      Check(launch.launcher == install::Launcher::kRke2, "an rke2 setting comes with rke2");
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Sections the input does not hold are empty.
  std::vector<std::string> sections =
      dxshim::fuzz::Sections(dxshim::fuzz::InputText(data, size), kSections);
  sections.resize(kSections);
  FuzzNode fuzz(sections);
  const std::string kKey = "SYSTEM\\CurrentControlSet\\Services\\kubelet\\Parameters";
  fuzz.registry[FuzzNode::RegistryName(kKey, "Application")] = {sections[kApplication], true};
  fuzz.registry[FuzzNode::RegistryName(kKey, "AppParameters")] = {sections[kParameters], true};
  const bool rke2 = sections[kService].rfind("rke2:", 0) == 0;
  if (rke2) {
    fuzz.AddService("rke2", sections[kService].substr(5), {}, false);
  } else {
    fuzz.AddService("kubelet", sections[kService], {}, false);
  }

  install::KubeletLaunch launch;
  try {
    launch = install::FindKubeletLaunch(fuzz);
  } catch (const install::NodeError&) {
    return 0;
  }
  const auto words = install::SplitCommandLine(fuzz.ExpandEnvironment(sections[kService]));
  const std::string program = words.empty() ? "" : install::FileNameOf(words[0].text);
  switch (launch.launcher) {
    case install::Launcher::kUnknown:
      Check(!launch.why_unknown.empty(), "an unknown launcher says why");
      break;
    case install::Launcher::kNssmKubelet:
    case install::Launcher::kNssmKubeadmScript:
    case install::Launcher::kNssmAksScript:
      Check(!rke2 && program == "nssm.exe", "an NSSM launcher runs nssm.exe");
      break;
    case install::Launcher::kNativeService:
      Check(!rke2 && launch.first_flag >= 1 && launch.first_flag <= words.size() &&
                install::FileNameOf(words[launch.first_flag - 1].text) == "kubelet.exe",
            "a native service runs kubelet.exe");
      break;
    case install::Launcher::kRke2:
      Check(rke2, "rke2 is the rke2 service");
      break;
  }
  if (!launch.script.empty()) {
    bool named = false;
    for (const auto& word :
         install::SplitArguments(fuzz.ExpandEnvironment(sections[kParameters]))) {
      named = named || word.text == launch.script;
    }
    Check(named, "the script is a word of AppParameters");
  }
  if (launch.launcher == install::Launcher::kUnknown) return 0;

  const auto& endpoint = launch.runtime_endpoint;
  switch (endpoint.place) {
    case SettingPlace::kDefault:
      Check(endpoint.value == install::kKubeletDefaultEndpoint, "kubelet's default endpoint");
      break;
    case SettingPlace::kLauncherDefault:
      Check(launch.launcher == install::Launcher::kRke2, "a launcher's default is rke2's");
      break;
    case SettingPlace::kConfigFile:
    case SettingPlace::kConfigDropIn:
      Check(install::ReadTopLevelString(*fuzz.ReadFile(endpoint.path),
                                        "containerRuntimeEndpoint") == endpoint.value,
            "a config file's endpoint is its containerRuntimeEndpoint");
      break;
    case SettingPlace::kRke2Config: {
      // The files rke2 reads: its config file, then the YAML files of its .d folder.
      std::vector<install::Rke2ConfigFile> files = {{endpoint.path, *fuzz.ReadFile(endpoint.path)}};
      for (const auto& name : fuzz.ListFiles(endpoint.path + ".d")) {
        const std::string path = endpoint.path + ".d\\" + name;
        if (name.ends_with(".yaml")) files.push_back({path, *fuzz.ReadFile(path)});
      }
      const auto items = install::Rke2KubeletArgs(files);
      Check(install::Rke2KubeletFlag(items, "container-runtime-endpoint") == endpoint.value,
            "rke2's endpoint is its kubelet-arg item");
      break;
    }
    default:
      CheckFlagSetting(fuzz, sections, launch, endpoint, "container-runtime-endpoint");
  }
  if (launch.hostname_override) {
    CheckFlagSetting(fuzz, sections, launch, *launch.hostname_override, "hostname-override");
  }
  if (launch.node_labels)
    CheckFlagSetting(fuzz, sections, launch, *launch.node_labels, "node-labels");
  return 0;
}
