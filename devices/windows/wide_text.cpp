#include "devices/windows/wide_text.h"

#include <windows.h>

#include <cstring>
#include <cwchar>

namespace dxshim::devices::windows {

std::wstring Widen(const std::string& utf8) {
  if (utf8.empty()) return {};
  const int size = static_cast<int>(utf8.size());
  const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), size, nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, utf8.data(), size, out.data(), n);
  return out;
}

std::string Narrow(const wchar_t* text, std::size_t length) {
  if (length == 0) return {};
  const int size = static_cast<int>(length);
  const int n = WideCharToMultiByte(CP_UTF8, 0, text, size, nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text, size, out.data(), n, nullptr, nullptr);
  return out;
}

std::string Utf8FromWide(const wchar_t* nul_terminated) {
  return Narrow(nul_terminated, std::wcslen(nul_terminated));
}

std::string Utf8FromWideBytes(const unsigned char* data, std::size_t size, bool stop_at_nul) {
  std::wstring text(size / sizeof(wchar_t), L'\0');
  std::memcpy(text.data(), data, text.size() * sizeof(wchar_t));
  if (stop_at_nul) text.resize(std::wcslen(text.c_str()));
  return Narrow(text.data(), text.size());
}

}  // namespace dxshim::devices::windows
