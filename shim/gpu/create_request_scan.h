// A look at a serialized CreateContainerRequest without decoding it: does the pod carry a
// dxshim.io/ annotation, or the container config any device or the dxshim.io/plugin-slots
// annotation of dxshim's device plugin? Only then does dxshim decode the
// request; every other CreateContainer passes through untouched and unparsed.
#pragma once

#include <string_view>

namespace dxshim {

// True when the request may need dxshim (or is malformed: the full decoder then decides).
bool MayNeedDevices(std::string_view create_container_request);

}  // namespace dxshim
