#pragma once

namespace dxshim {

// `dxshim doctor`: checks the node's GPU path with serve's configuration and prints one line per
// check (or JSON). Exit 0 when no check failed, 1 otherwise, 2 for a bad --output.
int RunDoctor(int argc, char** argv);

}  // namespace dxshim
