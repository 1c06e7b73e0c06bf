// The defaults of serve's options that code outside the option table starts from too (the
// injection's container paths, the pipe's security descriptor in tests): each written once, here,
// and read by the table (serve_option_table.cpp) like any other default.
#pragma once

namespace dxshim::config {

// linux-system32-path, linux-syswow64-path: where a Linux container sees the runtime files.
inline constexpr char kDefaultLinuxSystem32Path[] = "/usr/lib/dxshim";
inline constexpr char kDefaultLinuxSyswow64Path[] = "/usr/lib32/dxshim";
// pipe-sddl: SYSTEM and built-in Administrators get full access; nobody else; nothing inherited.
inline constexpr char kDefaultPipeSddl[] = "D:P(A;;GA;;;SY)(A;;GA;;;BA)";

// The configuration file the installed service reads (doctor reads it; install writes the
// Windows one): the systemd unit's (deploy/linux), and install.ps1's and `dxshim install`'s,
// under the folder the ProgramData environment variable names.
inline constexpr char kInstalledLinuxConfig[] = "/etc/dxshim/dxshim.yaml";
inline constexpr char kProgramDataVariable[] = "%ProgramData%";
inline constexpr char kInstalledWindowsConfig[] = "%ProgramData%\\dxshim\\dxshim.yaml";

}  // namespace dxshim::config
