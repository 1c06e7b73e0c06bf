// `dxshim serve --node-feature-file`: the real binary keeps a Node Feature Discovery feature file
// with the node's GPU labels (the same lines `dxshim devices --output labels` prints), rewrites
// it when the inventory changes, never leaves a half-written file, and removes it on exit only
// when configured to. No runtime is needed for this (dxshim serves with its runtime down).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/dxshim_process.h"
#include "tests/support/process.h"
#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

using std::chrono::seconds;
const std::string kInventories = DXSHIM_SOURCE_DIR "/deploy/examples/inventories";

std::string Golden(const std::string& inventory) {
  return ReadFile(DXSHIM_SOURCE_DIR "/tests/golden/labels/" + inventory + ".labels");
}

// The file's label lines (its comment line aside).
std::string Labels(const std::string& path) {
  std::istringstream in(ReadFile(path));
  std::string line, out;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') out += line + "\n";
  }
  return out;
}

class NodeFeatureFile : public testing::Test {
 protected:
  void Use(const std::string& inventory) {
    // Renamed into place, as an operator's tooling would: dxshim never reads half a file.
    std::filesystem::copy_file(kInventories + "/" + inventory + ".yaml", dir_ / "next.yaml",
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(dir_ / "next.yaml", dir_ / "inventory.yaml");
  }
  void Start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> flags = {"--device-source",     "inventory:" + dir_ / "inventory.yaml",
                                      "--device-refresh",    "200ms",
                                      "--node-feature-file", features_,
                                      "--device-plugin",     "false"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    dxshim_ = std::make_unique<DxshimProcess>(dir_ / "dxshim.sock", "unix://" + dir_ / "none.sock",
                                              dir_ / "dxshim.log", flags);
  }
  bool WaitForLabels(const std::string& expected) {
    return WaitFor([&] { return Labels(features_) == expected; }, seconds(30));
  }

  TempDir dir_;
  const std::string features_ = dir_ / "features.d-dxshim";
  std::unique_ptr<DxshimProcess> dxshim_;
};

TEST_F(NodeFeatureFile, IsWrittenAtStartAndRewrittenWhenTheGpusChange) {
  Use("nvidia-t4");
  Start();
  ASSERT_TRUE(WaitForLabels(Golden("nvidia-t4")))
      << ReadFile(features_) << dxshim_->process().Log();
  Use("hetero-node");  // hot-plug: a new inventory
  EXPECT_TRUE(WaitForLabels(Golden("hetero-node"))) << ReadFile(features_);
  Use("intel-igpu");  // only an integrated GPU, not handed out: no GPU
  EXPECT_TRUE(WaitForLabels("dxshim.io/gpu.present=false\n")) << ReadFile(features_);
  EXPECT_FALSE(std::filesystem::exists(features_ + ".tmp"));
  EXPECT_NE(dxshim_->process().Log().find("rewrote " + features_), std::string::npos);
  // Kept on exit by default: the labels stay true while dxshim restarts.
  ASSERT_EQ(dxshim_->Stop(), 0);
  EXPECT_TRUE(std::filesystem::exists(features_));
}

TEST_F(NodeFeatureFile, IsRemovedOnExitOnlyWhenConfigured) {
  Use("amd-radeon");
  Start({"--node-feature-file-remove", "true"});
  ASSERT_TRUE(WaitForLabels(Golden("amd-radeon"))) << ReadFile(features_);
  ASSERT_EQ(dxshim_->Stop(), 0);
  EXPECT_FALSE(std::filesystem::exists(features_));
}

TEST_F(NodeFeatureFile, AnUnwritablePathStopsServeWithAMessageNamingIt) {
  Use("amd-radeon");
  std::string output;
  const auto code = RunDxshim(
      {"serve", "--listen", "unix://" + dir_ / "x.sock", "--runtime",
       "unix://" + dir_ / "none.sock", "--device-source", "inventory:" + dir_ / "inventory.yaml",
       "--device-plugin", "false", "--node-feature-file", dir_ / "no/such/dir/dxshim"},
      dir_ / "fail.log", &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("node-feature-file " + dir_ / "no/such/dir/dxshim"), std::string::npos)
      << output;
}

}  // namespace
}  // namespace dxshim::test
