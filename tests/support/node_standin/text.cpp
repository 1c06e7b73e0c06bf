// Case-insensitive comparison and environment expansion of the node stand-ins' wide text.
#include "tests/support/node_standin/text.h"

#include <windows.h>

#include <cwctype>

namespace dxshim::test::node_standin {

std::wstring Lower(std::wstring text) {
  for (auto& c : text) c = static_cast<wchar_t>(std::towlower(static_cast<wint_t>(c)));
  return text;
}

bool EndsWithNoCase(const std::wstring& text, const std::wstring& suffix) {
  return text.size() >= suffix.size() &&
         Lower(text.substr(text.size() - suffix.size())) == Lower(suffix);
}

std::wstring ExpandEnvironment(const std::wstring& text) {
  const DWORD size = ExpandEnvironmentStringsW(text.c_str(), nullptr, 0);
  if (size == 0) return text;
  std::wstring out(size, L'\0');
  const DWORD n = ExpandEnvironmentStringsW(text.c_str(), out.data(), size);
  if (n == 0 || n > size) return text;
  out.resize(n - 1);  // n counts the terminating NUL
  return out;
}

}  // namespace dxshim::test::node_standin
