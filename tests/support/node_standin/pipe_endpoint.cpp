// The named pipe of an npipe:// endpoint, as kubelet's parseEndpoint reads one.
#include "tests/support/node_standin/pipe_endpoint.h"

#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

std::optional<std::wstring> PipePathOfEndpoint(std::wstring endpoint) {
  for (auto& c : endpoint) c = c == L'\\' ? L'/' : c;
  const std::wstring scheme = L"npipe://";
  if (Lower(endpoint.substr(0, scheme.size())) != scheme) return std::nullopt;
  const std::wstring rest = endpoint.substr(scheme.size());
  const auto slash = rest.find(L'/');
  const std::wstring host = rest.substr(0, slash);
  const std::wstring path = slash == std::wstring::npos ? L"" : rest.substr(slash);
  std::wstring full =
      path.rfind(L"//./pipe", 0) == 0 ? path : L"//" + (host.empty() ? L"." : host) + path;
  for (auto& c : full) c = c == L'/' ? L'\\' : c;
  return full;
}

}  // namespace dxshim::test::node_standin
