#pragma once

namespace dxshim {

// `dxshim devices`: lists the node's GPUs. Returns the process exit code.
int RunDevices(int argc, char** argv);

}  // namespace dxshim
