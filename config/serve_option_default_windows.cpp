// PlatformDefault (serve_option_table.h) in the Windows build: the key's Windows default where
// it has one, else the Linux one.
#include "config/serve_option_table.h"

namespace dxshim::config {

const char* PlatformDefault(const ServeOption& option) {
  return option.windows_default ? option.windows_default : option.linux_default;
}

}  // namespace dxshim::config
