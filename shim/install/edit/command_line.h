// Windows command lines as text: split into words the way a program started with the line sees
// its arguments (CommandLineToArgvW's program rule, the MSVC C runtime's rules for the rest), with
// each word's span in the line, and one argument quoted so that it splits back unchanged. The
// edits of `dxshim install` (kubelet_flags.h) replace words in a service's ImagePath by their
// spans, so that every other byte of the line stays as it was.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::install {

// What every edit of this library throws when a text cannot be read or changed safely; the message
// names the file kind, the key or flag and, where there is one, the line.
class EditError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Word {
  std::string text;       // the argument, quotes and escapes removed
  std::size_t begin = 0;  // its span [begin, end) in the line, quotes included
  std::size_t end = 0;
  bool quoted = false;  // the span holds a quote character (added: a replacement keeps quotes)
};

// Splits a Windows command line exactly as CommandLineToArgvW / the MSVC C runtime does for
// arguments: spaces and tabs separate words; "..." groups; 2n backslashes + quote -> n backslashes
// and the quote toggles; 2n+1 backslashes + quote -> n backslashes + a literal quote; backslashes
// not before a quote are literal; "" inside quotes -> a literal quote (the CRT since VS2008). The
// first word (the program) follows CommandLineToArgvW's program rule: from a leading quote up to
// the next quote (the word ends there), or else up to the first space or tab, with no backslash
// processing. Leading spaces and tabs before the program are skipped (CommandLineToArgvW would
// return an empty program name). An empty or blank line gives no words.
std::vector<Word> SplitCommandLine(std::string_view line);

// A line of arguments with no program before them (NSSM's AppParameters, which nssm.exe puts after
// the quoted program it starts): every word, the first included, by the C runtime's rules for
// arguments. SplitCommandLine would read its first word by the program rule (no backslash or
// quote processing), which is not how the program started with it reads it.
std::vector<Word> SplitArguments(std::string_view line);

// One argument quoted so that SplitCommandLine gives it back as a word after the first: unchanged
// when it needs no quotes; quoted when it is empty or holds a space, tab or quote (backslashes
// before a quote or the closing quote doubled, quotes escaped with a backslash).
std::string QuoteArgument(std::string_view text);

// The file name at the end of a Windows path (either slash), lower case: a program's name as
// a command line gives it.
std::string FileNameOf(std::string_view path);

// `text` quoted even when it needs no quotes (a replacement of a value that was quoted keeps its
// quotes).
std::string QuoteArgumentAlways(std::string_view text);

// Where the first `chars` characters of a word's text (a word after the first) end in the line:
// the offset just past the character that gave the last of them, and whether a quote is open
// there. For a word `--name=value`, SplitWord(line, word, 7) is the point just past "--name=".
struct WordPoint {
  std::size_t offset = 0;
  bool in_quotes = false;
};
WordPoint SplitWord(std::string_view line, const Word& word, std::size_t chars);

// True when the line ends inside an open quote (anything appended to it would join the last
// word). A program name with no closing quote counts too.
bool EndsInsideQuotes(std::string_view line);
bool ArgumentsEndInsideQuotes(std::string_view line);  // the same for SplitArguments

}  // namespace dxshim::install
