// A command's words as PowerShell 5.1's tokenizer reads them in command mode (Tokenizer.cs:
// ScanGenericToken, ScanParameter, ScanNumber). The grammar the rest of the script is parsed with
// cannot read command arguments: `--name=value` is a syntax error there and `-Version1` a
// parameter `-Version` with a missing redirection. So the interpreter tokenizes each command's
// text itself, with these rules; expressions inside it (`$x.y`, `(...)`, `{...}`, strings) are
// handed back to the grammar as text. Portable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin::powershell {

// A part of a bare word: literal text (backtick escapes applied, quotes removed), a variable, a
// `$( )` subexpression or a "..." string to expand.
struct WordPart {
  enum class Kind { kText, kVariable, kSubExpression, kExpandable };
  Kind kind = Kind::kText;
  std::string text;          // the literal, the variable's name (scope:name), or the source inside
  std::uint32_t offset = 0;  // where that source starts in the script's text
};

// One argument item.
struct ArgumentItem {
  enum class Kind {
    kWord,         // a bare word: its parts concatenated into one string
    kNumber,       // a number literal (`text` as written)
    kExpression,   // `source` is an expression for the grammar ($x.y, (...), @(...), '...')
    kScriptBlock,  // `source` is the text between the braces
    kSplat,        // `source` is the variable's name (@name)
  };
  Kind kind = Kind::kWord;
  std::vector<WordPart> parts;
  std::string source;
  std::uint32_t offset = 0;  // of the item in the script's text
  std::string text;          // the item as written
};

struct CommandToken {
  enum class Kind { kArgument, kParameter, kRedirection, kVerbatim };
  Kind kind = Kind::kArgument;
  std::uint32_t offset = 0;
  std::string text;  // as written
  // kArgument (and a parameter's `-name:value`): one item, or more for a comma list `a,b`.
  std::vector<ArgumentItem> items;
  // kParameter: the name without the dash; `colon` when written `-name:` (its argument is in
  // `items`, `space_after` when blanks separate them).
  std::string parameter;
  bool colon = false;
  bool space_after = false;
  // kRedirection: the stream (1, 2, ... or 0 for `*`), `>>`, a merge into `merge_to` (2>&1),
  // else the file in `items`.
  int stream = 1;
  bool append = false;
  int merge_to = 0;
  // kVerbatim: `--%` and the rest of the line, as written.
};

struct CommandSyntax {
  enum class Invocation { kNone, kCall, kDotSource };  // `& x`, `. x`
  Invocation invocation = Invocation::kNone;
  std::vector<CommandToken> tokens;  // the first is the command's name
};

// The command in TEXT[START, END) (a `command` node of the grammar). Nothing, with ERROR and the
// offset it happened at, when it holds what this tokenizer does not read or ends before END.
std::optional<CommandSyntax> TokenizeCommand(const std::string& text, std::uint32_t start,
                                             std::uint32_t end, std::string& error,
                                             std::uint32_t& error_offset);

// Where the command starting at TEXT[START] ends by these rules (at a newline, ;, |, or an
// unbalanced ) or }, blanks and comments before it excluded) and where its name ends: false when
// it cannot be read.
bool CommandExtent(const std::string& text, std::uint32_t start, std::uint32_t& name_end,
                   std::uint32_t& end);

// Scanning helpers shared with the expansion of "..." strings. Each takes TEXT at I (the opening
// character) and returns the index after the construct, or npos when it is not closed.
std::size_t SkipGroup(const std::string& text, std::size_t i);         // ( ), { }, [ ] nested
std::size_t SkipDoubleQuoted(const std::string& text, std::size_t i);  // "..."
std::size_t SkipSingleQuoted(const std::string& text, std::size_t i);  // '...'
// A variable reference at TEXT[I] == '$': its name (`scope:name`, `_`, `{x}`'s x) and the index
// after it; nothing when `$` starts none.
std::optional<std::string> ScanVariable(const std::string& text, std::size_t i, std::size_t& next);
// The character a backtick escape `C gives (`n newline, `t tab, `0 NUL, ...; others themselves).
char BacktickChar(char c);

}  // namespace dxshim::test::node_standin::powershell
