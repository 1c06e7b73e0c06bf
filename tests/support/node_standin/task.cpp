// `--task ID` under any name: a container's process, as the shim stand-in starts it (suspended
// until the task is started); it does nothing until it is ended.
#include <windows.h>

#include "tests/support/node_standin/roles.h"

namespace dxshim::test::node_standin {

int RunTask() {
  for (;;) Sleep(INFINITE);
}

}  // namespace dxshim::test::node_standin
