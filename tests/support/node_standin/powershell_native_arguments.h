// How Windows PowerShell 5.1 turns a native command's arguments into its command line
// (NativeCommandParameterBinder: appendOneNativeArgument, NeedQuotes), and how .NET's
// System.Diagnostics.Process builds the line it hands CreateProcess (BuildCommandLine).
// Portable.
#pragma once

#include <string>
#include <vector>

#include "tests/support/node_standin/powershell_value.h"

namespace dxshim::test::node_standin::powershell {

// One element of a native command's arguments, in the order written.
struct NativeArgument {
  bool is_parameter = false;  // `-name` or `-name:` as written (PARAMETER_TEXT)
  std::string parameter_text;
  bool space_after = false;  // blanks between `-name:` and its value
  bool has_value = false;
  Value value;              // an array is one argument per item
  bool comma_list = false;  // written `a,b`: its items joined by a comma, not a space
  bool verbatim = false;    // the text after --%: VALUE's text as it is
};

// The arguments string: elements separated by a space (also before an empty one, whose own
// text is nothing); each value as its text, in double quotes when it holds a blank outside
// double quotes, with its trailing backslashes doubled then.
std::string NativeArguments(const std::vector<NativeArgument>& arguments);

// NeedQuotes: a blank outside double quotes (a quote after a backslash does not count).
bool NeedsQuotes(const std::string& argument);

// Process.Start's command line: FILE in double quotes (unless it already is), then a space and
// ARGUMENTS when there are any.
std::string ProcessCommandLine(const std::string& file, const std::string& arguments);

}  // namespace dxshim::test::node_standin::powershell
