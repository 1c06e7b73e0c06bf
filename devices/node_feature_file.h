// Keeps a Node Feature Discovery local feature file (features.d/<file>: "name=value" lines) with
// the node's GPU labels (devices/node_labels.h) current: written when dxshim starts and again
// whenever the device snapshot changes what the labels say, always atomically (a temporary file
// renamed over the old one), so that nfd-worker never reads half a file.
#pragma once

#include <memory>
#include <string>

#include "devices/device_source.h"

namespace dxshim::devices {

class NodeFeatureFile {
 public:
  // Throws std::runtime_error naming the path when the first write fails.
  NodeFeatureFile(std::string path, const DeviceSnapshot& snapshot, bool remove_on_exit);
  ~NodeFeatureFile();
  NodeFeatureFile(const NodeFeatureFile&) = delete;
  NodeFeatureFile& operator=(const NodeFeatureFile&) = delete;

 private:
  void Write(const std::string& text) const;
  void Changed(const Inventory& inventory);

  const std::string path_;
  const DeviceSnapshot& snapshot_;
  const bool remove_on_exit_;
  std::string written_;
  std::unique_ptr<SnapshotFollower> follower_;
};

}  // namespace dxshim::devices
