// PlatformDefault (serve_option_table.h) in the POSIX build: the key's Linux default.
#include "config/serve_option_table.h"

namespace dxshim::config {

const char* PlatformDefault(const ServeOption& option) { return option.linux_default; }

}  // namespace dxshim::config
