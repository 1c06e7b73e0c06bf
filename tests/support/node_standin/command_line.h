// The node stand-in's command lines: splitting them, reading flags, quoting and finding words.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin {

// A command line split as CommandLineToArgvW does (argv[0] by its program-name rule).
std::vector<std::wstring> SplitCommandLine(const std::wstring& line);

// Parameters (no program name) split by the rules for every argument after the first.
std::vector<std::wstring> SplitParameters(const std::wstring& parameters);

// The value of a flag spelled any of SPELLINGS (`--name=value` or `--name value`), the last one
// given winning, as kubelet's flag parser and containerd's do.
std::optional<std::wstring> FlagValue(const std::vector<std::wstring>& args,
                                      const std::vector<std::wstring>& spellings);

// ARG quoted, if it must be, so that a program's command-line parser (CommandLineToArgvW, the
// MSVC runtime) gives it back unchanged.
std::wstring QuoteArgument(const std::wstring& arg);

// Where word INDEX (0: the program) of a command line starts, by the rules of
// CommandLineToArgvW: the program from a leading quote to the next one, else to a blank; then
// words separated by blanks outside quotes, a quote toggling unless an odd number of backslashes
// precede it, "" inside quotes a literal quote. npos when the line has fewer words.
std::size_t WordStart(const std::wstring& line, std::size_t index);

}  // namespace dxshim::test::node_standin
