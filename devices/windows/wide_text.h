// Windows only: UTF-8 <-> UTF-16 conversions for API calls and registry/property data.
#pragma once

#include <cstddef>
#include <string>

namespace dxshim::devices::windows {

std::wstring Widen(const std::string& utf8);

// UTF-16 to UTF-8, NULs included (REG_MULTI_SZ separators survive).
std::string Narrow(const wchar_t* text, std::size_t length);

std::string Utf8FromWide(const wchar_t* nul_terminated);

// Property or registry bytes holding UTF-16 text; an odd trailing byte is ignored. With
// `stop_at_nul` the text ends at the first NUL (REG_SZ-like data), else NULs are kept.
std::string Utf8FromWideBytes(const unsigned char* data, std::size_t size, bool stop_at_nul);

}  // namespace dxshim::devices::windows
