#include "devices/windows/wide_text.h"

#include <windows.h>

#include <cstdio>
#include <cstring>
#include <cwchar>

namespace dxshim::devices::windows {
namespace {

bool IsHighSurrogate(wchar_t c) { return c >= 0xd800 && c <= 0xdbff; }
bool IsLowSurrogate(wchar_t c) { return c >= 0xdc00 && c <= 0xdfff; }

// The index of the first unpaired surrogate of `text`, or `length` when there is none.
std::size_t UnpairedSurrogate(const wchar_t* text, std::size_t length) {
  for (std::size_t i = 0; i < length; ++i) {
    if (IsHighSurrogate(text[i]) && i + 1 < length && IsLowSurrogate(text[i + 1])) {
      ++i;  // a pair: one code point above U+FFFF
    } else if (IsHighSurrogate(text[i]) || IsLowSurrogate(text[i])) {
      return i;
    }
  }
  return length;
}

std::string Escaped(wchar_t c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\u%04X", static_cast<unsigned>(c));
  return buf;
}

// UTF-16 without unpaired surrogates to UTF-8. WC_ERR_INVALID_CHARS: a surrogate the scan above
// missed fails the call instead of becoming U+FFFD.
std::string Convert(const wchar_t* text, std::size_t length) {
  if (length == 0) return {};
  const int size = static_cast<int>(length);
  const int n =
      WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, text, size, nullptr, 0, nullptr, nullptr);
  if (n <= 0) {
    throw Utf16Error("UTF-16 text of " + std::to_string(length) +
                     " characters cannot be converted to UTF-8 (error " +
                     std::to_string(GetLastError()) + ")");
  }
  std::string out(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, text, size, out.data(), n, nullptr, nullptr);
  return out;
}

// `text` with each unpaired surrogate shown as \uXXXX.
std::string Shown(const wchar_t* text, std::size_t length) {
  std::string out;
  std::size_t start = 0;
  while (start < length) {
    const auto bad = start + UnpairedSurrogate(text + start, length - start);
    out += Convert(text + start, bad - start);
    if (bad == length) break;
    out += Escaped(text[bad]);
    start = bad + 1;
  }
  return out;
}

}  // namespace

std::wstring Widen(const std::string& utf8) {
  if (utf8.empty()) return {};
  const int size = static_cast<int>(utf8.size());
  const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), size, nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, utf8.data(), size, out.data(), n);
  return out;
}

std::string Narrow(const wchar_t* text, std::size_t length, Surrogates surrogates) {
  const auto bad = UnpairedSurrogate(text, length);
  if (bad == length) return Convert(text, length);
  if (surrogates == Surrogates::kShow) return Shown(text, length);
  throw Utf16Error("'" + Shown(text, length) + "' holds an unpaired UTF-16 surrogate (U+" +
                   Escaped(text[bad]).substr(2) + " at character " + std::to_string(bad) +
                   "), which has no UTF-8 form");
}

std::string Utf8FromWide(const wchar_t* nul_terminated, Surrogates surrogates) {
  return Narrow(nul_terminated, std::wcslen(nul_terminated), surrogates);
}

std::vector<std::string> Utf8FromMultiSz(const wchar_t* data, std::size_t length) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < length) {
    std::size_t end = start;
    while (end < length && data[end] != L'\0') ++end;
    if (end == start) break;  // the empty string that ends the list
    out.push_back(Narrow(data + start, end - start));
    start = end + 1;
  }
  return out;
}

std::string Utf8FromWideBytes(const unsigned char* data, std::size_t size, bool stop_at_nul,
                              Surrogates surrogates) {
  std::wstring text(size / sizeof(wchar_t), L'\0');
  std::memcpy(text.data(), data, text.size() * sizeof(wchar_t));
  if (stop_at_nul) text.resize(std::wcslen(text.c_str()));
  return Narrow(text.data(), text.size(), surrogates);
}

}  // namespace dxshim::devices::windows
