// Byte quantities as Kubernetes writes resource quantities ("16Gi", "1.5Gi", "8G"), for GPU memory
// in inventory files, dxshim.io/ annotations and serve's options; a unit of its own, as
// containerd's resourcequantity is.
#pragma once

#include <cstdint>
#include <string>

namespace dxshim::devices {

// "16Gi", "512Mi", "1.5Gi", "8G", "1073741824": bytes (a fraction rounded up to whole bytes, as
// Kubernetes rounds quantities). Throws std::invalid_argument.
std::uint64_t ParseByteQuantity(const std::string& text);

}  // namespace dxshim::devices
