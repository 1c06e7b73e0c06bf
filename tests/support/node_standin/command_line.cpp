// Splitting and reading the node stand-in's command lines, quoting arguments, finding words.
#include "tests/support/node_standin/command_line.h"

// clang-format off
#include <windows.h>
#include <shellapi.h>
// clang-format on

namespace dxshim::test::node_standin {

std::vector<std::wstring> SplitCommandLine(const std::wstring& line) {
  std::vector<std::wstring> out;
  int argc = 0;
  LPWSTR* argv = CommandLineToArgvW(line.c_str(), &argc);
  if (!argv) return out;
  for (int i = 0; i < argc; ++i) out.emplace_back(argv[i]);
  LocalFree(argv);
  return out;
}

std::vector<std::wstring> SplitParameters(const std::wstring& parameters) {
  auto out = SplitCommandLine(L"x " + parameters);
  if (!out.empty()) out.erase(out.begin());
  return out;
}

std::optional<std::wstring> FlagValue(const std::vector<std::wstring>& args,
                                      const std::vector<std::wstring>& spellings) {
  std::optional<std::wstring> value;
  for (std::size_t i = 1; i < args.size(); ++i) {
    for (const auto& flag : spellings) {
      if (args[i].rfind(flag + L"=", 0) == 0) {
        value = args[i].substr(flag.size() + 1);
      } else if (args[i] == flag && i + 1 < args.size()) {
        value = args[++i];
      }
    }
  }
  return value;
}

std::wstring QuoteArgument(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\"") == std::wstring::npos) return arg;
  std::wstring out = L"\"";
  std::size_t backslashes = 0;
  for (const wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    out.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
    out += c;
    backslashes = 0;
  }
  out.append(backslashes * 2, L'\\');
  return out + L"\"";
}

std::size_t WordStart(const std::wstring& line, std::size_t index) {
  const auto blank = [&line](std::size_t i) { return line[i] == L' ' || line[i] == L'\t'; };
  std::size_t i = 0;
  while (i < line.size() && blank(i)) ++i;
  if (i >= line.size()) return std::wstring::npos;
  if (index == 0) return i;
  if (line[i] == L'"') {
    i = line.find(L'"', i + 1);
    i = i == std::wstring::npos ? line.size() : i + 1;
  } else {
    while (i < line.size() && !blank(i)) ++i;
  }
  for (std::size_t word = 1;; ++word) {
    while (i < line.size() && blank(i)) ++i;
    if (i >= line.size()) return std::wstring::npos;
    if (word == index) return i;
    bool quoted = false;
    std::size_t backslashes = 0;
    while (i < line.size() && (quoted || !blank(i))) {
      if (line[i] == L'"' && backslashes % 2 == 0) {
        if (quoted && i + 1 < line.size() && line[i + 1] == L'"') {
          ++i;  // "" inside quotes: a literal quote
        } else {
          quoted = !quoted;
        }
      }
      backslashes = line[i] == L'\\' ? backslashes + 1 : 0;
      ++i;
    }
  }
}

}  // namespace dxshim::test::node_standin
