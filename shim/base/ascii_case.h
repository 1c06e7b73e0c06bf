// ASCII case: the names dxshim compares as Windows and Kubernetes do, without case (services,
// programs, paths, flags, vendor names, HTTP header names). ASCII letters only, whatever the
// locale: bytes of UTF-8 sequences are never changed.
#pragma once

#include <string>
#include <string_view>

namespace dxshim {

// `text` with A-Z lower-cased.
std::string ToLowerAscii(std::string_view text);
// Equal when A-Z and a-z are taken as the same.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace dxshim
