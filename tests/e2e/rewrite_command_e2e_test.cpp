// `dxshim rewrite` golden tests, compared byte for byte with tests/golden/:
// - rewrite/: the crictl files of deploy/examples/rewrite on the example inventories;
// - pods/: every Kubernetes pod of deploy/examples/pods, each container turned into the crictl
//   files kubelet's request would carry, on the inventory the example is meant for, with the
//   Windows node configuration deploy/examples/dxshim-windows.yaml.
// To regenerate after an intended change:
// DXSHIM_UPDATE_GOLDEN=1 build/tests/rewrite_command_e2e_test, then review the diff. With
// DXSHIM_COMMAND set (a shell command prefix, e.g. wine running dxshim.exe:
// windows_rewrite_command_test) the same goldens check that build: same code, two platforms, the
// same bytes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

const std::string kSource = DXSHIM_SOURCE_DIR;
const std::string kExamples = kSource + "/deploy/examples/";
const std::string kGolden = kSource + "/tests/golden/rewrite/";

struct Case {
  std::string name;
  std::vector<std::string> args;
  int exit_code;
};

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// Runs `dxshim rewrite ARGS` from the source tree (so paths in messages do not depend on where
// it is) and compares stdout and stderr with GOLDEN.out and GOLDEN.err.
void ExpectGolden(const std::vector<std::string>& args, int exit_code, const std::string& golden) {
  TempDir dir;
  const char* other = std::getenv("DXSHIM_COMMAND");
  std::string command = (other ? std::string(other) : Quote(DXSHIM_BINARY)) + " rewrite";
  for (const auto& a : args) command += " " + Quote(a);
  command = "cd " + Quote(kSource) + " && " + command + " >" + Quote(dir / "out") + " 2>" +
            Quote(dir / "err");
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), exit_code) << ReadFile(dir / "err");
  for (const std::string stream : {"out", "err"}) {
    const auto actual = ReadFile(dir / stream);
    const auto file = golden + "." + stream;
    if (std::getenv("DXSHIM_UPDATE_GOLDEN") && !other) {
      std::ofstream(file) << actual;
      continue;
    }
    EXPECT_EQ(actual, ReadFile(file)) << "differs from " << file;
  }
}

class RewriteGolden : public testing::TestWithParam<Case> {};

TEST_P(RewriteGolden, MatchesTheGoldenFiles) {
  ExpectGolden(GetParam().args, GetParam().exit_code, kGolden + GetParam().name);
}

const std::string kInv = "deploy/examples/inventories/";
const std::string kRw = "deploy/examples/rewrite/";
const std::vector<std::string> kWindowsPreview = {"--target", "windows", "--skip-host-file-check",
                                                  "--explain"};

std::vector<std::string> Args(std::vector<std::string> head, const std::string& inventory,
                              const std::string& container, const std::string& pod) {
  head.insert(head.end(), kWindowsPreview.begin(), kWindowsPreview.end());
  head.insert(head.end(), {"--inventory", kInv + inventory, kRw + container, kRw + pod});
  return head;
}

INSTANTIATE_TEST_SUITE_P(
    Examples, RewriteGolden,
    testing::Values(
        // The T4 mapping: one vpci-location-path device and the 14 runtime files.
        Case{"t4-cuda", Args({}, "nvidia-t4.yaml", "container-cuda.json", "pod-cuda.json"), 0},
        Case{"t4-cuda-ctr",
             Args({"--format", "ctr"}, "nvidia-t4.yaml", "container-cuda.json", "pod-cuda.json"),
             0},
        // Two vendors on the node: the AMD GPU, exclusively, with AMD's files only.
        Case{"hetero-amd-exclusive",
             Args({}, "hetero-node.yaml", "container-cuda.json", "pod-amd-exclusive.json"), 0},
        // The pod mounts five of the T4's files itself, each in a form kubelet or a device
        // plugin sends (c:/..., upper case, no drive, ".", doubled "/"): dxshim adds the other 9.
        Case{"t4-kubelet-mount-forms",
             Args({}, "nvidia-t4.yaml", "container-kubelet-mounts.json", "pod-cuda.json"), 0},
        // A device plugin already assigned the T4: dxshim adds only its runtime files.
        Case{"t4-plugin-assigned",
             Args({}, "nvidia-t4.yaml", "container-plugin-assigned.json", "pod-plain.json"), 0},
        // A class device narrowed to one GPU; the operator's nvidia-smi.exe added.
        Case{"hetero-class-narrowed",
             Args({"--config", kRw + "dxshim-narrow.yaml"}, "hetero-node.yaml",
                  "container-class.json", "pod-plain.json"),
             0},
        // No dxshim.io/ annotation and no device: unchanged.
        Case{"unchanged", Args({}, "nvidia-t4.yaml", "container-cuda.json", "pod-plain.json"), 0},
        // Refusals, with the status kubelet would get.
        Case{"malformed-annotation",
             Args({}, "nvidia-t4.yaml", "container-cuda.json", "pod-malformed.json"), 1},
        Case{"no-matching-gpu", Args({}, "amd-radeon.yaml", "container-cuda.json", "pod-cuda.json"),
             1},
        // Without --skip-host-file-check on this (Linux) machine no DriverStore file exists:
        // the device is injected, no file is mounted, and the explanation says why.
        Case{"host-files-missing",
             {"--target", "windows", "--explain", "--inventory", kInv + "nvidia-t4.yaml",
              kRw + "container-cuda.json", kRw + "pod-cuda.json"},
             0},
        // A DriverStore folder and a runtime file named with non-ASCII characters: mounted as the
        // same UTF-8 bytes (every CRI string must be valid UTF-8).
        Case{"non-ascii-driver-store",
             {"--target", "windows", "--skip-host-file-check", "--explain", "--inventory",
              "tests/golden/rewrite/non-ascii-driver-store.inventory.yaml",
              kRw + "container-cuda.json", kRw + "pod-cuda.json"},
             0},
        // The pod's RuntimeClass runs it in a Hyper-V VM (the Windows default of
        // vm-runtime-handlers): refused, with the reason.
        Case{"t4-hyperv-refused",
             Args({"--runtime-handler", "runhcs-wcow-hypervisor", "--config",
                   "deploy/examples/dxshim-windows.yaml"},
                  "nvidia-t4.yaml", "container-cuda.json", "pod-cuda.json"),
             1}),
    [](const testing::TestParamInfo<Case>& param) {
      std::string name = param.param.name;
      for (auto& ch : name) ch = ch == '-' ? '_' : ch;
      return name;
    });

// An inventory with bytes that are not UTF-8 (the T4's DriverStore folder as a conversion through
// the ANSI code page would leave "ñé": F1 E9) never reaches a rewrite: refused at load, naming the
// line, the field and the byte, in a message that is valid UTF-8 itself.
TEST(RewriteRefusals, AnInventoryThatIsNotUtf8IsRefusedAtLoad) {
  TempDir dir;
  auto inventory = ReadFile(kExamples + "inventories/nvidia-t4.yaml");
  const std::string store = "nvgridsw_aws.inf_amd64_5b7ec8f2a8e3b31a";
  const auto at = inventory.find(store);
  ASSERT_NE(at, std::string::npos);
  const auto line =
      1 + std::count(inventory.begin(), inventory.begin() + static_cast<long>(at), '\n');
  inventory.replace(at, store.size(), "nvmiig.inf_amd64_\xf1\xe9");
  std::ofstream(dir / "inventory.yaml") << inventory;
  const char* other = std::getenv("DXSHIM_COMMAND");
  const std::string command =
      "cd " + Quote(kSource) + " && " + (other ? std::string(other) : Quote(DXSHIM_BINARY)) +
      " rewrite --target windows --skip-host-file-check --inventory " +
      Quote(dir / "inventory.yaml") + " " + Quote(kRw + "container-cuda.json") + " " +
      Quote(kRw + "pod-cuda.json") + " >" + Quote(dir / "out") + " 2>" + Quote(dir / "err");
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  const auto err = ReadFile(dir / "err");
  EXPECT_EQ(WEXITSTATUS(status), 2) << err;
  EXPECT_EQ(ReadFile(dir / "out"), "");
  EXPECT_NE(
      err.find(
          "line " + std::to_string(line) +
          ": devices[0].driverStore: is not valid UTF-8 (byte 0xF1 at offset 64 of "
          "'C:\\Windows\\System32\\DriverStore\\FileRepository\\nvmiig.inf_amd64_\\xF1\\xE9')"),
      std::string::npos)
      << err;
  EXPECT_EQ(err.find('\xf1'), std::string::npos) << "the message itself must be valid UTF-8";
}

// The inventory each example pod is meant for.
const std::map<std::string, std::string> kPodInventories = {
    {"amf-encode-exclusive", "amd-radeon.yaml"},
    {"cuda-devicequery", "nvidia-t4.yaml"},
    {"device-listing", "hetero-node.yaml"},
    {"directml-hello", "mcdm-compute.yaml"},
    {"ffmpeg-nvenc", "nvidia-t4.yaml"},
    {"ffmpeg-quicksync", "intel-igpu.yaml"},
    {"gpu-check", "nvidia-t4.yaml"},
    {"gpu-environment", "nvidia-t4.yaml"},
    {"gpu-memory-encoder", "nvidia-t4.yaml"},
    {"gpu-memory-limit", "nvidia-t4.yaml"},
    {"labels-resource-and-annotation", "hetero-node.yaml"},
    {"nvidia-smi", "nvidia-t4.yaml"},
    {"opencl-enumeration", "nvidia-t4.yaml"},
    {"resource-limit", "nvidia-t4.yaml"},
    {"scoped-and-pinned", "hetero-node.yaml"},
    {"vulkan-info", "hetero-node.yaml"},
};

// What kubelet's CreateContainer would carry for one container of a pod, as crictl files. A
// container with a dxshim.io/gpu resource limit carries what dxshim's device plugin answered to
// kubelet's Allocate: that many plugin slots in the dxshim.io/plugin-slots annotation; one with a
// dxshim.io/gpu-memory limit that many memory units in dxshim.io/plugin-memory-units.
void WriteCrictlFiles(const YAML::Node& pod, const YAML::Node& container, const TempDir& dir) {
  YAML::Emitter p;
  p << YAML::DoubleQuoted << YAML::Flow << YAML::BeginMap;
  p << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  p << YAML::Key << "name" << YAML::Value << pod["metadata"]["name"].as<std::string>();
  p << YAML::Key << "namespace" << YAML::Value << "default";
  p << YAML::Key << "uid" << YAML::Value << "example-uid" << YAML::EndMap;
  p << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
  for (const auto& kv : pod["metadata"]["annotations"]) {  // none: an empty map
    p << YAML::Key << kv.first.as<std::string>() << YAML::Value << kv.second.as<std::string>();
  }
  p << YAML::EndMap << YAML::EndMap;
  std::ofstream(dir / "pod.json") << p.c_str();
  YAML::Emitter c;
  c << YAML::DoubleQuoted << YAML::Flow << YAML::BeginMap;
  c << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name"
    << YAML::Value << container["name"].as<std::string>() << YAML::EndMap;
  c << YAML::Key << "image" << YAML::Value << YAML::BeginMap << YAML::Key << "image" << YAML::Value
    << container["image"].as<std::string>() << YAML::EndMap;
  c << YAML::Key << "command" << YAML::Value << YAML::BeginSeq;
  for (const auto& arg : container["command"]) c << arg.as<std::string>();
  c << YAML::EndSeq;
  const auto resources = container["resources"];
  const auto limits = resources ? resources["limits"] : YAML::Node();
  struct Allocated {
    const char* resource;
    const char* annotation;
    const char* id_prefix;  // as dxshim's device plugin names its devices
  };
  const Allocated kAllocated[] = {
      {"dxshim.io/gpu", "dxshim.io/plugin-slots", "gpu-0e1f2a3b-"},
      {"dxshim.io/gpu-memory", "dxshim.io/plugin-memory-units", "mem-0e1f2a3b-"}};
  bool annotated = false;
  for (const auto& a : kAllocated) {
    if (!limits || !limits[a.resource]) continue;
    std::string ids;
    for (int i = 0; i < limits[a.resource].as<int>(); ++i) {
      ids += (i ? "," : "") + std::string(a.id_prefix) + std::to_string(i);
    }
    if (!annotated) c << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
    annotated = true;
    c << YAML::Key << a.annotation << YAML::Value << ids;
  }
  if (annotated) c << YAML::EndMap;
  c << YAML::EndMap;
  std::ofstream(dir / "container.json") << c.c_str();
}

TEST(ExamplePods, EachContainerOfEachExampleMatchesItsGoldenRewrite) {
  std::set<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(kExamples + "pods")) {
    // The folder also holds its README.md and the images' Dockerfiles, in folders of their own.
    if (entry.path().extension() != ".yaml") continue;
    const auto name = entry.path().stem().string();
    ASSERT_TRUE(kPodInventories.count(name)) << "no inventory listed for example " << name;
    seen.insert(name);
    const auto pod = YAML::LoadFile(entry.path().string());
    for (const char* list : {"initContainers", "containers"}) {
      for (const auto& container : pod["spec"][list]) {
        SCOPED_TRACE(name + "/" + container["name"].as<std::string>());
        TempDir dir;
        WriteCrictlFiles(pod, container, dir);
        ExpectGolden(
            {"--config", "deploy/examples/dxshim-windows.yaml", "--inventory",
             kInv + kPodInventories.at(name), "--skip-host-file-check", "--explain",
             dir / "container.json", dir / "pod.json"},
            0, kSource + "/tests/golden/pods/" + name + "." + container["name"].as<std::string>());
      }
    }
  }
  EXPECT_EQ(seen.size(), kPodInventories.size());
}

}  // namespace
}  // namespace dxshim::test
