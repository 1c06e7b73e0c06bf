#pragma once

namespace dxshim {

// `dxshim install` / `dxshim uninstall` (shim/install/installer.h): put dxshim between this
// Windows node's kubelet and containerd, or take it out. Return the process exit code.
int RunInstall(int argc, char** argv);
int RunUninstall(int argc, char** argv);

}  // namespace dxshim
