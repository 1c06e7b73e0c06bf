// PowerShell's patterns: -like's wildcards (WildcardPattern) and -match/-replace/-split's .NET
// regular expressions, run with std::regex after translating what differs (portable).
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace dxshim::test::node_standin::powershell {

// WildcardPattern: * any run, ? one character, [abc] and [a-z] sets, ` escapes the next.
bool WildcardMatch(const std::string& pattern, const std::string& text, bool case_sensitive);

// A .NET pattern as std::regex (ECMAScript): leading (?i) (?s) (?m) options; `.` matching a
// newline under (?s); `$` without (?m) also before a last newline, as in .NET. Nothing, with
// ERROR naming it, for a construct this stand-in does not translate (lookbehind, named groups,
// \A, \z, atomic groups, \p{...}).
std::optional<std::regex> DotNetRegex(const std::string& pattern, bool case_sensitive,
                                      std::string& error);

// A .NET replacement string ($1, ${1}, $0, $$) in std::regex_replace's format; nothing for
// what it cannot say (${name}, $_, $+).
std::optional<std::string> DotNetReplacement(const std::string& replacement, std::string& error);

// Regex.Split: the text between matches, each match's captured groups in between.
std::vector<std::string> RegexSplit(const std::string& text, const std::regex& pattern);

}  // namespace dxshim::test::node_standin::powershell
