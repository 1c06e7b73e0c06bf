// The CRI endpoint a running kubelet uses, read from its arguments and the files they name, as
// kubelet applies them: the flag beats the --config-dir drop-ins (the last one that sets it),
// which beat the --config file, which beats kubelet's default; a file it names that is missing or
// not YAML is an error naming it. Files are an in-memory map here (the Linux /proc reader and the
// Windows node system give real ones: doctor_e2e_test, installer tests under wine).
#include "shim/install/kubelet/kubelet_endpoint.h"

#include <gtest/gtest.h>

#include <map>

namespace dxshim::install {
namespace {

class KubeletEndpointTest : public testing::Test {
 protected:
  KubeletEndpointTest() {
    files_.read = [this](const std::string& path) -> std::optional<std::string> {
      const auto it = disk_.find(path);
      if (it == disk_.end()) return std::nullopt;
      return it->second;
    };
    files_.list = [this](const std::string& folder) {
      std::vector<std::string> names;
      for (const auto& [path, text] : disk_) {
        if (path.rfind(folder + "/", 0) == 0) names.push_back(path.substr(folder.size() + 1));
      }
      return names;
    };
    files_.resolve = [](const std::string& path) { return path; };
  }

  Setting Read(const std::vector<std::string>& args) {
    return KubeletEndpoint(WordsOf(args), files_);
  }

  std::map<std::string, std::string> disk_;
  KubeletFiles files_;
};

TEST_F(KubeletEndpointTest, TheFlagWins) {
  disk_["/var/lib/kubelet/config.yaml"] = "containerRuntimeEndpoint: unix:///run/a.sock\n";
  const auto s = Read({"/usr/bin/kubelet", "--config", "/var/lib/kubelet/config.yaml",
                       "--container-runtime-endpoint=unix:///run/dxshim/dxshim.sock"});
  EXPECT_EQ(s.value, "unix:///run/dxshim/dxshim.sock");
  EXPECT_EQ(s.place, SettingPlace::kServiceCommandLine);
}

TEST_F(KubeletEndpointTest, DropInsBeatTheConfigFileAndTheLastOneWins) {
  disk_["/etc/kubelet.yaml"] = "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: unix:///a\n";
  disk_["/etc/kubelet.conf.d/10-a.conf"] = "containerRuntimeEndpoint: unix:///b\n";
  disk_["/etc/kubelet.conf.d/20-b.conf"] = "containerRuntimeEndpoint: unix:///c\n";
  disk_["/etc/kubelet.conf.d/30-c.conf"] = "maxPods: 20\n";
  disk_["/etc/kubelet.conf.d/README"] = "containerRuntimeEndpoint: unix:///not-a-drop-in\n";
  const auto s =
      Read({"kubelet", "--config=/etc/kubelet.yaml", "--config-dir", "/etc/kubelet.conf.d"});
  EXPECT_EQ(s.value, "unix:///c");
  EXPECT_EQ(s.place, SettingPlace::kConfigDropIn);
  EXPECT_EQ(s.path, "/etc/kubelet.conf.d/20-b.conf");

  const auto file_only = Read({"kubelet", "--config=/etc/kubelet.yaml"});
  EXPECT_EQ(file_only.value, "unix:///a");
  EXPECT_EQ(file_only.place, SettingPlace::kConfigFile);
  EXPECT_EQ(file_only.path, "/etc/kubelet.yaml");
}

TEST_F(KubeletEndpointTest, NothingSetIsKubeletsDefault) {
  const auto s = Read({"kubelet", "--v=2"});
  EXPECT_EQ(s.value, kKubeletDefaultEndpoint);
  EXPECT_EQ(s.place, SettingPlace::kDefault);
}

TEST_F(KubeletEndpointTest, AFileItNamesThatIsMissingOrNotYamlIsAnError) {
  EXPECT_THROW(Read({"kubelet", "--config", "/nowhere.yaml"}), NodeError);
  disk_["/bad.yaml"] = "containerRuntimeEndpoint: [unclosed\n";
  try {
    Read({"kubelet", "--config", "/bad.yaml"});
    FAIL() << "no error";
  } catch (const NodeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("kubelet's config file /bad.yaml: ", 0), 0u) << e.what();
  }
}

TEST_F(KubeletEndpointTest, AFileOnAShareOrAPipeIsNeverOpened) {
  // As an Administrator, opening \\server\share would send the caller's credentials there.
  std::vector<std::string> opened;
  files_.read = [&opened](const std::string& path) -> std::optional<std::string> {
    opened.push_back(path);
    return "containerRuntimeEndpoint: npipe://./pipe/dxshim\n";
  };
  for (const char* path : {"\\\\attacker\\share\\config.yaml", "\\\\.\\pipe\\impostor",
                           "//attacker/share/config.yaml"}) {
    EXPECT_THROW(Read({"kubelet.exe", std::string("--config=") + path}), NodeError) << path;
  }
  files_.list = [&opened](const std::string& folder) {
    opened.push_back(folder);
    return std::vector<std::string>{};
  };
  EXPECT_THROW(Read({"kubelet.exe", "--config-dir=\\\\attacker\\share"}), NodeError);
  EXPECT_TRUE(opened.empty());
  EXPECT_EQ(Read({"kubelet.exe", "--config=\\\\?\\C:\\k\\config.yaml"}).value,
            "npipe://./pipe/dxshim");
}

}  // namespace
}  // namespace dxshim::install
