// Case folding for the names the installer compares as Windows does, without case: services,
// programs, paths, flags and keys. ASCII letters only: std::tolower in the "C" locale.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace dxshim::node {

inline std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace dxshim::node
