#include "devices/node_feature_file.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "devices/node_labels.h"

namespace dxshim::devices {
namespace {

std::string Render(const Inventory& inventory) {
  return "# Written by dxshim from the node's GPUs; rewritten when they change.\n" +
         FormatLabelLines(NodeLabels(inventory.devices));
}

}  // namespace

NodeFeatureFile::NodeFeatureFile(std::string path, const DeviceSnapshot& snapshot,
                                 bool remove_on_exit)
    : path_(std::move(path)), snapshot_(snapshot), remove_on_exit_(remove_on_exit) {
  const auto inventory = snapshot_.Current();
  written_ = Render(*inventory);
  Write(written_);
  spdlog::info("node labels: wrote {}", path_);
  follower_ = std::make_unique<SnapshotFollower>(snapshot_, inventory->generation,
                                                 [this](const Inventory& now) { Changed(now); });
}

NodeFeatureFile::~NodeFeatureFile() {
  follower_.reset();  // no write after this
  if (remove_on_exit_) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    if (ec) spdlog::warn("node labels: cannot remove {}: {}", path_, ec.message());
  }
}

void NodeFeatureFile::Write(const std::string& text) const {
  const auto temp = path_ + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("node-feature-file " + path_ + ": cannot write " + temp);
  }
  std::error_code ec;
  std::filesystem::rename(temp, path_, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw std::runtime_error("node-feature-file " + path_ + ": cannot replace it: " + ec.message());
  }
}

void NodeFeatureFile::Changed(const Inventory& inventory) {
  auto text = Render(inventory);
  if (text == written_) return;
  try {
    Write(text);
    written_ = std::move(text);
    spdlog::info("node labels: devices changed, rewrote {}", path_);
  } catch (const std::exception& e) {
    spdlog::error("node labels: {}", e.what());
  }
}

}  // namespace dxshim::devices
