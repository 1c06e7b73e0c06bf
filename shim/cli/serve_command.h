#pragma once

namespace dxshim {

// `dxshim serve`: runs the proxy until SIGTERM or SIGINT. Returns the process exit code.
int RunServe(int argc, char** argv);

}  // namespace dxshim
