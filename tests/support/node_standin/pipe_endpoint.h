// The named pipe of an npipe:// endpoint, as kubelet reads one.
#pragma once

#include <optional>
#include <string>

namespace dxshim::test::node_standin {

// kubelet's parseEndpoint (pkg/kubelet/util/util_windows.go): backslashes become slashes, then
// npipe://HOST/PATH names //HOST/PATH (HOST "." when empty) and a PATH already starting with
// //./pipe is taken as it is. Returned with backslashes: \\.\pipe\NAME.
std::optional<std::wstring> PipePathOfEndpoint(std::wstring endpoint);

}  // namespace dxshim::test::node_standin
