// The "GPUs" of the end-to-end tests: no GPU exists here, so each is a character device node the
// test makes (mknod 1:3, the same device as /dev/null; containerd and runc handle any device node
// alike), listed in an inventory file with one runtime file, libdxgpu.so, from a store directory.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace dxshim::test {

class DeviceNode {
 public:
  // /dev/dxshim-<tag>-<pid>-<index>; throws when mknod fails (the tests run as root).
  DeviceNode(const std::string& tag, int index);
  ~DeviceNode();
  DeviceNode(const DeviceNode&) = delete;
  DeviceNode& operator=(const DeviceNode&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `inventory`: one NVIDIA GPU per node, with id '0000:<bus>:00.<i>' and the runtime file
// libdxgpu.so from `store` (which must hold it).
void WriteTestGpuInventory(const std::filesystem::path& inventory,
                           const std::vector<const DeviceNode*>& nodes, const std::string& bus,
                           const std::filesystem::path& store);

}  // namespace dxshim::test
