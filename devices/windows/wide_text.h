// Windows only: UTF-8 <-> UTF-16 conversions for API calls and registry/property data.
//
// Everything Windows gives as UTF-16 (paths, registry names and data, device properties) becomes
// UTF-8 with WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS): never the ANSI code page, and
// never a silently replaced character. UTF-16 that holds an unpaired surrogate (U+D800 to U+DFFF
// alone, which Windows names accept) has no UTF-8 form: it is refused with Utf16Error, so that no
// path or name dxshim uses, or puts into a CRI request (which must hold valid UTF-8:
// shim/base/utf8_text.h), is a mangled copy of the real one.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace dxshim::devices::windows {

// UTF-16 text with an unpaired surrogate. what(): "'C:\x\uD800.dll' holds an unpaired UTF-16
// surrogate (U+D800 at character 5), which has no UTF-8 form", the text shown as with
// Surrogates::kShow; callers put the name of the value in front.
class Utf16Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a conversion to UTF-8 does with an unpaired surrogate: refuse the text (Utf16Error), for
// every path, key, name and value dxshim uses or passes on; or show it as the six characters
// \uD800, for text that is only shown (messages, logs, a device's description).
enum class Surrogates { kRefuse, kShow };

// UTF-8 to UTF-16 for API calls.
std::wstring Widen(const std::string& utf8);

// UTF-16 to UTF-8, NULs included (REG_MULTI_SZ separators survive).
std::string Narrow(const wchar_t* text, std::size_t length,
                   Surrogates surrogates = Surrogates::kRefuse);

std::string Utf8FromWide(const wchar_t* nul_terminated,
                         Surrogates surrogates = Surrogates::kRefuse);

// REG_MULTI_SZ-style UTF-16 (each string ended by a NUL, the list by an empty string; what
// follows is ignored, as SplitMultiSz does) as UTF-8 strings. Each is converted on its own: a
// Utf16Error shows the one string at fault.
std::vector<std::string> Utf8FromMultiSz(const wchar_t* data, std::size_t length);

// Property or registry bytes holding UTF-16 text; an odd trailing byte is ignored. With
// `stop_at_nul` the text ends at the first NUL (REG_SZ-like data), else NULs are kept.
std::string Utf8FromWideBytes(const unsigned char* data, std::size_t size, bool stop_at_nul,
                              Surrogates surrogates = Surrogates::kRefuse);

}  // namespace dxshim::devices::windows
