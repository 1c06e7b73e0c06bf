#include "tests/support/test_gpu.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <stdexcept>

namespace dxshim::test {

DeviceNode::DeviceNode(const std::string& tag, int index)
    : path_("/dev/dxshim-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(index)) {
  ::unlink(path_.c_str());
  if (::mknod(path_.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    throw std::runtime_error("mknod " + path_ + " failed (the tests run as root)");
  }
}

DeviceNode::~DeviceNode() { ::unlink(path_.c_str()); }

void WriteTestGpuInventory(const std::filesystem::path& inventory,
                           const std::vector<const DeviceNode*>& nodes, const std::string& bus,
                           const std::filesystem::path& store) {
  std::string upper_bus = bus;  // the LUID as dxshim writes it: upper-case hex digits
  for (auto& c : upper_bus) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::ofstream out(inventory);
  out << "devices:\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out << "  - id: '0000:" << bus << ":00." << i << "'\n"
        << "    luid: 0x00000000_0x000" << upper_bus << "E2" << i << "\n"
        << "    locationPath: '" << nodes[i]->path() << "'\n"
        << R"(    description: Test GPU (a device node made by the test)
    vendor: NVIDIA
    vendorId: 0x10de
    deviceId: 0x1eb8
    subsystemId: 0x00000000
    revision: 0x00
    class: display
    integrated: false
    detachable: false
    dedicatedMemory: 16Gi
    driverVersion: '1.0'
)"
        // An NVML-form UUID, made of the bus and the index as the LUID is.
        << "    uuid: GPU-00000000-0000-4000-8000-0000" << bus << "e2000" << i << "\n"
        << "    driverStore: '" << store.string() << R"('
    driverKey: ''
    present: true
    runtimeFiles:
      system32:
        - {source: libdxgpu.so}
      syswow64: []
)";
  }
}

}  // namespace dxshim::test
