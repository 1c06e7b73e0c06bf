// A native command's command line from its arguments, as PowerShell 5.1 and .NET build it.
#include "tests/support/node_standin/powershell_native_arguments.h"

#include <cctype>

namespace dxshim::test::node_standin::powershell {

namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

void AppendOne(std::string& out, const Value& value, char separator) {
  const Values items = value.IsArray() ? *value.array : Values{value};
  bool need_separator = false;
  for (const Value& item : items) {
    const std::string arg = item.IsArray() ? "System.Object[]" : ToText(item);
    if (arg.empty()) continue;
    if (need_separator) out += separator;
    need_separator = true;
    if (!NeedsQuotes(arg)) {
      out += arg;
      continue;
    }
    out += '"';
    out += arg;
    for (std::size_t i = arg.size(); i > 0 && arg[i - 1] == '\\'; --i) out += '\\';
    out += '"';
  }
}

}  // namespace

bool NeedsQuotes(const std::string& argument) {
  bool following_backslash = false;
  int quotes = 0;
  for (const char c : argument) {
    if (c == '"' && !following_backslash) {
      ++quotes;
    } else if (IsSpace(c) && quotes % 2 == 0) {
      return true;
    }
    following_backslash = c == '\\';
  }
  return false;
}

std::string NativeArguments(const std::vector<NativeArgument>& arguments) {
  std::string out;
  bool first = true;
  for (const NativeArgument& argument : arguments) {
    if (!first) out += ' ';
    first = false;
    if (argument.is_parameter) {
      out += argument.parameter_text;
      if (argument.space_after) out += ' ';
    }
    if (!argument.has_value) continue;
    if (argument.verbatim) {
      out += ToText(argument.value);
    } else {
      AppendOne(out, argument.value, argument.comma_list ? ',' : ' ');
    }
  }
  return out;
}

std::string ProcessCommandLine(const std::string& file, const std::string& arguments) {
  std::string name = file;
  while (!name.empty() && IsSpace(name.front())) name.erase(name.begin());
  while (!name.empty() && IsSpace(name.back())) name.pop_back();
  const bool quoted = name.size() >= 2 && name.front() == '"' && name.back() == '"';
  std::string line = quoted ? name : "\"" + name + "\"";
  if (!arguments.empty()) line += " " + arguments;
  return line;
}

}  // namespace dxshim::test::node_standin::powershell
