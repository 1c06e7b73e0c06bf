// Wide text of the node stand-ins: case-insensitive comparison and environment expansion.
#pragma once

#include <string>

namespace dxshim::test::node_standin {

std::wstring Lower(std::wstring text);
bool EndsWithNoCase(const std::wstring& text, const std::wstring& suffix);
// TEXT with its %NAME% environment variables expanded (TEXT itself if that fails).
std::wstring ExpandEnvironment(const std::wstring& text);

}  // namespace dxshim::test::node_standin
