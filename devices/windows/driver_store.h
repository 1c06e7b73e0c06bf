// Windows only: an adapter's DriverStore folder, as the graphics kernel reports it
// (D3DKMTQueryAdapterInfo, KMTQAITYPE_QUERYREGISTRY, D3DDDI_QUERYREGISTRY_DRIVERSTOREPATH).
#pragma once

#include <cstdint>
#include <string>

namespace dxshim::devices::windows {

// The folder as a path a process can open: a leading "\SystemRoot" is expanded to the Windows
// directory. Inside a container this is ...\System32\HostDriverStore\... (see
// IsContainerDriverStore). Throws std::runtime_error naming the failing call.
std::string QueryDriverStorePath(std::uint64_t luid);

}  // namespace dxshim::devices::windows
