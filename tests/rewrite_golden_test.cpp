// `dxshim rewrite` golden tests: the example pods and container configs of deploy/examples/rewrite
// on the example inventories, compared byte for byte with tests/golden/rewrite/. To regenerate
// after an intended change: DXSHIM_UPDATE_GOLDEN=1 build/tests/rewrite_golden_test, then review
// the diff.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

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

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

class RewriteGolden : public testing::TestWithParam<Case> {};

TEST_P(RewriteGolden, MatchesTheGoldenFiles) {
  const auto& c = GetParam();
  TempDir dir;
  std::string command = Quote(DXSHIM_BINARY) + " rewrite";
  for (const auto& a : c.args) command += " " + Quote(a);
  // Paths in messages are relative to the source tree, so golden files do not depend on it.
  command = "cd " + Quote(kSource) + " && " + command + " >" + Quote(dir / "out") + " 2>" +
            Quote(dir / "err");
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), c.exit_code) << Read(dir / "err");
  for (const std::string stream : {"out", "err"}) {
    const auto actual = Read(dir / stream);
    const auto golden = kGolden + c.name + "." + stream;
    if (std::getenv("DXSHIM_UPDATE_GOLDEN")) {
      std::ofstream(golden) << actual;
      continue;
    }
    EXPECT_EQ(actual, Read(golden)) << "differs from " << golden;
  }
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
             0}),
    [](const testing::TestParamInfo<Case>& param) {
      std::string name = param.param.name;
      for (auto& ch : name) ch = ch == '-' ? '_' : ch;
      return name;
    });

}  // namespace
}  // namespace dxshim::test
