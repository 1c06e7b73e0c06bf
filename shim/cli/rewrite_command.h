#pragma once

namespace dxshim {

// `dxshim rewrite`: shows how a container config (crictl's JSON) would be rewritten for its pod.
// Returns the process exit code.
int RunRewrite(int argc, char** argv);

}  // namespace dxshim
