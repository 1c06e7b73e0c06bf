// A Go program's command line as the Go standard library reads and writes it: the flag package's
// parsing (go/src/flag/flag.go, FlagSet.parseOne) and the command line os/exec builds for a child
// on Windows (go/src/syscall/exec_windows.go, makeCmdLine and appendEscapeArg).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::test::node_standin {

struct GoFlag {
  std::string name;
  bool is_bool = false;  // needs no value: -name alone is true, -name=false sets false
};

struct GoFlagParse {
  std::map<std::string, std::string> values;  // flags given, by name (a bool as "true"/"false")
  std::vector<std::string> rest;  // flag.Args(): from the first non-flag word, or after "--"
  std::string error;              // as the flag package words it; empty when parsed
  bool help = false;              // -h or -help, not defined: flag.ErrHelp
};

// ARGS (without the program) parsed as a flag.FlagSet with FLAGS defined: "-name" or "--name",
// "=value" or (not for a bool) the next word, up to the first word that is not a flag ("-" alone
// or without a leading dash) or "--". A bool's value must be one strconv.ParseBool accepts; other
// values are kept as text (their types' own checks are not made).
GoFlagParse ParseGoFlags(const std::vector<std::string>& args, const std::vector<GoFlag>& flags);

// ARG as appendEscapeArg writes it: as it is unless it is empty or holds a blank, a quote or a
// backslash; quoted only when it is empty or holds a blank; backslashes doubled only before a
// quote (and at the end, inside quotes), each quote escaped.
std::string GoEscapeArg(std::string_view arg);
// makeCmdLine: every argument escaped, joined by single spaces (the program's name too).
std::string GoCommandLine(const std::vector<std::string>& args);

}  // namespace dxshim::test::node_standin
