// PowerShell 5.1's command-mode tokenizer rules, for a command's words.
#include "tests/support/node_standin/powershell_command_tokens.h"

#include <cctype>

namespace dxshim::test::node_standin::powershell {

namespace {

constexpr auto npos = std::string::npos;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }
bool IsNewline(char c) { return c == '\r' || c == '\n'; }

// CharExtensions.ForceStartNewToken: what ends a bare word.
bool ForcesNewToken(char c) {
  switch (c) {
    case '\0':
    case ' ':
    case '\t':
    case '\v':
    case '\f':
    case '\r':
    case '\n':
    case '&':
    case '(':
    case ')':
    case ',':
    case ';':
    case '{':
    case '|':
    case '}':
      return true;
    default:
      return false;
  }
}

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool IsLetter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Whether a `#` at I starts a comment: at the start of a token.
bool CommentStart(const std::string& text, std::size_t i) {
  if (i == 0) return true;
  const char before = text[i - 1];
  return IsBlank(before) || IsNewline(before) || before == ';' || before == '(' || before == '{' ||
         before == '|' || before == '&' || before == ',' || before == '}' || before == ')';
}

// A here-string at I (`@"` or `@'` ending its line): the index after its footer, `"@` or `'@`
// at the start of a line.
std::size_t SkipHereString(const std::string& text, std::size_t i) {
  const char quote = text[i + 1];
  for (std::size_t line = text.find('\n', i); line != npos; line = text.find('\n', line + 1)) {
    if (line + 2 < text.size() && text[line + 1] == quote && text[line + 2] == '@') return line + 3;
  }
  return npos;
}

bool HereStringStart(const std::string& text, std::size_t i) {
  if (i + 2 >= text.size() || text[i] != '@' || (text[i + 1] != '"' && text[i + 1] != '\'')) {
    return false;
  }
  std::size_t j = i + 2;
  while (j < text.size() && IsBlank(text[j])) ++j;
  return j < text.size() && IsNewline(text[j]);
}

}  // namespace

char BacktickChar(char c) {
  switch (c) {
    case '0':
      return '\0';
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    default:
      return c;
  }
}

std::size_t SkipSingleQuoted(const std::string& text, std::size_t i) {
  for (std::size_t j = i + 1; j < text.size(); ++j) {
    if (text[j] != '\'') continue;
    if (j + 1 < text.size() && text[j + 1] == '\'') {
      ++j;
      continue;
    }
    return j + 1;
  }
  return npos;
}

std::size_t SkipDoubleQuoted(const std::string& text, std::size_t i) {
  std::size_t j = i + 1;
  while (j < text.size()) {
    const char c = text[j];
    if (c == '`') {
      j += 2;
    } else if (c == '"') {
      if (j + 1 < text.size() && text[j + 1] == '"') {
        j += 2;
      } else {
        return j + 1;
      }
    } else if (c == '$' && j + 1 < text.size() && text[j + 1] == '(') {
      j = SkipGroup(text, j + 1);
      if (j == npos) return npos;
    } else {
      ++j;
    }
  }
  return npos;
}

std::size_t SkipGroup(const std::string& text, std::size_t i) {
  std::string closers;
  std::size_t j = i;
  while (j < text.size()) {
    const char c = text[j];
    if (c == '(' || c == '{' || c == '[') {
      closers += c == '(' ? ')' : (c == '{' ? '}' : ']');
      ++j;
    } else if (c == ')' || c == '}' || c == ']') {
      if (closers.empty() || closers.back() != c) return npos;
      closers.pop_back();
      ++j;
      if (closers.empty()) return j;
    } else if (c == '\'') {
      j = SkipSingleQuoted(text, j);
    } else if (c == '"') {
      j = SkipDoubleQuoted(text, j);
    } else if (c == '@' && HereStringStart(text, j)) {
      j = SkipHereString(text, j);
    } else if (c == '`') {
      j += 2;
    } else if (c == '<' && j + 1 < text.size() && text[j + 1] == '#') {
      const std::size_t close = text.find("#>", j + 2);
      j = close == npos ? npos : close + 2;
    } else if (c == '#' && CommentStart(text, j)) {
      while (j < text.size() && !IsNewline(text[j])) ++j;
    } else {
      ++j;
    }
    if (j == npos) return npos;
  }
  return npos;
}

std::optional<std::string> ScanVariable(const std::string& text, std::size_t i, std::size_t& next) {
  if (i + 1 >= text.size()) return std::nullopt;
  const char first = text[i + 1];
  if (first == '{') {
    std::string name;
    for (std::size_t j = i + 2; j < text.size(); ++j) {
      if (text[j] == '`' && j + 1 < text.size()) {
        name += text[++j];
      } else if (text[j] == '}') {
        next = j + 1;
        return name;
      } else {
        name += text[j];
      }
    }
    return std::nullopt;
  }
  if (first == '$' || first == '?' || first == '^') {
    next = i + 2;
    return std::string(1, first);
  }
  std::size_t j = i + 1;
  while (j < text.size() && IsNameChar(text[j])) ++j;
  if (j == i + 1) return std::nullopt;
  // A scope or drive qualifier: $global:x, $env:x (not $x:: nor a lone colon).
  if (j + 1 < text.size() && text[j] == ':' && IsNameChar(text[j + 1])) {
    ++j;
    while (j < text.size() && IsNameChar(text[j])) ++j;
  }
  next = j;
  return text.substr(i + 1, j - i - 1);
}

namespace {

class Tokenizer {
 public:
  Tokenizer(const std::string& text, std::uint32_t start, std::uint32_t end)
      : t_(text), i_(start), end_(end) {}

  // STOP_AT_END: a command terminator (newline, ;, |, ), }) ends the command; else the
  // command must fill [start, end).
  std::optional<CommandSyntax> Run(std::string& error, std::uint32_t& error_offset,
                                   bool stop_at_end) {
    CommandSyntax command;
    SkipBlanks();
    if (Peek() == '&' && Peek(1) != '&') {
      command.invocation = CommandSyntax::Invocation::kCall;
      ++i_;
    } else if (Peek() == '.' &&
               (IsBlank(Peek(1)) || Peek(1) == '"' || Peek(1) == '\'' || Peek(1) == '$')) {
      command.invocation = CommandSyntax::Invocation::kDotSource;
      ++i_;
    }
    while (error_.empty()) {
      SkipBlanks();
      if (i_ >= end_) break;
      const char c = Peek();
      if (IsNewline(c) || c == ';' || c == '|' || c == '&' || c == ')' || c == '}') {
        if (!stop_at_end) Fail("the command ends here but the grammar's command goes on");
        break;
      }
      Next(command);
      if (command.tokens.size() == 1) name_end_ = i_;
    }
    if (error_.empty() && command.tokens.empty()) Fail("a command without a name");
    if (!error_.empty()) {
      error = error_;
      error_offset = static_cast<std::uint32_t>(error_at_);
      return std::nullopt;
    }
    return command;
  }

  std::size_t name_end() const { return name_end_; }
  std::size_t position() const { return i_; }

 private:
  char Peek(std::size_t k = 0) const { return i_ + k < end_ ? t_[i_ + k] : '\0'; }
  char At(std::size_t j) const { return j < end_ ? t_[j] : '\0'; }

  void Fail(const std::string& why) {
    if (error_.empty()) {
      error_ = why;
      error_at_ = i_;
    }
  }

  // Blanks, line continuations (a backtick ending the line) and comments.
  void SkipBlanks() {
    while (i_ < end_) {
      const char c = Peek();
      if (IsBlank(c)) {
        ++i_;
      } else if (c == '`' && IsNewline(Peek(1))) {
        i_ += (Peek(1) == '\r' && Peek(2) == '\n') ? 3u : 2u;
      } else if (c == '#' && CommentStart(t_, i_)) {
        while (i_ < end_ && !IsNewline(Peek())) ++i_;
      } else if (c == '<' && Peek(1) == '#') {
        const std::size_t close = t_.find("#>", i_ + 2);
        if (close == npos || close + 2 > end_) {
          Fail("an unterminated <# comment");
          return;
        }
        i_ = close + 2;
      } else {
        return;
      }
    }
  }

  void Next(CommandSyntax& command) {
    const char c = Peek();
    CommandToken token;
    token.offset = static_cast<std::uint32_t>(i_);
    const std::size_t start = i_;
    if (c == '>' || ((c == '*' || (c >= '1' && c <= '6')) && Peek(1) == '>')) {
      Redirection(token);
    } else if (c == '-' && Peek(1) == '-' && Peek(2) == '%' && ForcesNewToken(Peek(3))) {
      token.kind = CommandToken::Kind::kVerbatim;
      while (i_ < end_ && !IsNewline(Peek())) ++i_;
    } else if (c == '-' && !command.tokens.empty() &&
               (IsLetter(Peek(1)) || Peek(1) == '_' || Peek(1) == '?')) {
      Parameter(token);
    } else {
      token.kind = CommandToken::Kind::kArgument;
      Items(token);
    }
    token.text = t_.substr(start, i_ - start);
    command.tokens.push_back(std::move(token));
  }

  void Redirection(CommandToken& token) {
    token.kind = CommandToken::Kind::kRedirection;
    if (Peek() == '*') {
      token.stream = 0;
      ++i_;
    } else if (Peek() != '>') {
      token.stream = Peek() - '0';
      ++i_;
    }
    ++i_;  // '>'
    if (Peek() == '>') {
      token.append = true;
      ++i_;
    }
    if (Peek() == '&' && IsDigit(Peek(1))) {
      token.merge_to = Peek(1) - '0';
      i_ += 2;
      return;
    }
    SkipBlanks();
    if (i_ >= end_ || ForcesNewToken(Peek())) {
      Fail("a redirection without a file");
      return;
    }
    token.items.push_back(Item());
  }

  // ScanParameter: `-name`, `-name:` (its argument follows), or a bare word when a quote
  // appears in it (`-a"b"`).
  void Parameter(CommandToken& token) {
    std::size_t j = i_ + 1;
    std::string name;
    bool colon = false;
    while (j < end_) {
      const char ch = t_[j];
      if (IsBlank(ch) || ForcesNewToken(ch) || ch == '.' || ch == '[') break;
      if (ch == '\'' || ch == '"') {
        token.kind = CommandToken::Kind::kArgument;
        Items(token);
        return;
      }
      if (ch == ':') {
        colon = true;
        ++j;
        break;
      }
      name += ch;
      ++j;
    }
    token.kind = CommandToken::Kind::kParameter;
    token.parameter = name;
    token.colon = colon;
    i_ = j;
    if (!colon) return;
    token.space_after = IsBlank(Peek());
    SkipBlanks();
    if (i_ >= end_ || ForcesNewToken(Peek())) {
      Fail("-" + name + ": has no argument");
      return;
    }
    Items(token);
  }

  // One argument, or a comma list of them.
  void Items(CommandToken& token) {
    token.items.push_back(Item());
    while (error_.empty()) {
      std::size_t j = i_;
      while (j < end_ && IsBlank(t_[j])) ++j;
      if (At(j) != ',') return;
      i_ = j + 1;
      SkipBlanks();
      while (i_ < end_ && IsNewline(Peek())) {
        ++i_;
        SkipBlanks();
      }
      if (i_ >= end_) {
        Fail("a comma without an argument after it");
        return;
      }
      token.items.push_back(Item());
    }
  }

  // `.name`, `.name(...)`, `[...]` right after an expression: the index after them.
  std::size_t Postfix(std::size_t j) {
    for (;;) {
      if (At(j) == '.' && (IsLetter(At(j + 1)) || At(j + 1) == '_')) {
        j += 1;
        while (j < end_ && IsNameChar(t_[j])) ++j;
        if (At(j) == '(') j = Group(j);
      } else if (At(j) == '[') {
        j = Group(j);
      } else {
        return j;
      }
      if (j == npos) return npos;
    }
  }

  std::size_t Group(std::size_t j) {
    const std::size_t close = SkipGroup(t_, j);
    return close == npos || close > end_ ? npos : close;
  }

  ArgumentItem Expression(std::size_t close) {
    ArgumentItem item;
    item.offset = static_cast<std::uint32_t>(i_);
    if (close == npos) {
      Fail("an unclosed bracket or quote");
      i_ = end_;
      return item;
    }
    item.kind = ArgumentItem::Kind::kExpression;
    item.source = t_.substr(i_, close - i_);
    item.text = item.source;
    i_ = close;
    return item;
  }

  ArgumentItem Item() {
    const char c = Peek();
    if (c == '$' && Peek(1) == '(') return Expression(Postfix(Group(i_ + 1)));
    if (c == '$') {
      std::size_t after = 0;
      if (ScanVariable(t_, i_, after) && after <= end_) {
        const char next = At(after);
        if ((next == '.' && (IsLetter(At(after + 1)) || At(after + 1) == '_')) || next == '[') {
          return Expression(Postfix(after));
        }
        if (after >= end_ || ForcesNewToken(next)) return Expression(after);
      }
      return Word();  // `$env:X\y`: a word with a variable in it
    }
    if (c == '(' || (c == '@' && (Peek(1) == '(' || Peek(1) == '{'))) {
      const std::size_t open = c == '@' ? i_ + 1 : i_;
      return Expression(Postfix(Group(open)));
    }
    if (c == '@' && HereStringStart(t_, i_)) {
      const std::size_t close = SkipHereString(t_, i_);
      return Expression(close != npos && close <= end_ ? close : npos);
    }
    if (c == '@' && (IsNameChar(Peek(1)))) {
      ArgumentItem item;
      item.kind = ArgumentItem::Kind::kSplat;
      item.offset = static_cast<std::uint32_t>(i_);
      std::size_t after = 0;
      ScanVariable(t_, i_, after);
      item.source = t_.substr(i_ + 1, after - i_ - 1);
      item.text = t_.substr(i_, after - i_);
      i_ = after;
      return item;
    }
    if (c == '{') {
      const std::size_t close = Group(i_);
      ArgumentItem item;
      item.kind = ArgumentItem::Kind::kScriptBlock;
      item.offset = static_cast<std::uint32_t>(i_ + 1);
      if (close == npos) {
        Fail("an unclosed {");
        i_ = end_;
        return item;
      }
      item.source = t_.substr(i_ + 1, close - i_ - 2);
      item.text = t_.substr(i_, close - i_);
      i_ = close;
      return item;
    }
    if (c == '\'') {
      const std::size_t close = SkipSingleQuoted(t_, i_);
      return Expression(close != npos && close <= end_ ? close : npos);
    }
    if (c == '"') {
      const std::size_t close = SkipDoubleQuoted(t_, i_);
      return Expression(close != npos && close <= end_ ? close : npos);
    }
    if (IsDigit(c) || ((c == '.' || c == '-' || c == '+') && IsDigit(Peek(1))) ||
        (c == '-' && Peek(1) == '.' && IsDigit(Peek(2)))) {
      const std::size_t close = Number(i_);
      if (close != npos) {
        ArgumentItem item;
        item.kind = ArgumentItem::Kind::kNumber;
        item.offset = static_cast<std::uint32_t>(i_);
        item.text = t_.substr(i_, close - i_);
        i_ = close;
        return item;
      }
    }
    return Word();
  }

  // ScanNumber in command mode: the index after a number literal that a token break follows,
  // else npos (then it is a bare word, like `3.6"` or `1.25.0`).
  std::size_t Number(std::size_t j) {
    if (At(j) == '-' || At(j) == '+') ++j;
    const std::size_t digits = j;
    while (IsDigit(At(j))) ++j;
    if (At(j) == '.' && IsDigit(At(j + 1))) {
      ++j;
      while (IsDigit(At(j))) ++j;
    }
    if (j == digits) return npos;
    if ((At(j) == 'e' || At(j) == 'E') &&
        (IsDigit(At(j + 1)) || ((At(j + 1) == '+' || At(j + 1) == '-') && IsDigit(At(j + 2))))) {
      j += 2;
      while (IsDigit(At(j))) ++j;
    }
    return j >= end_ || ForcesNewToken(At(j)) ? j : npos;
  }

  // ScanGenericToken: up to a token break, quotes and `$` expanded in place.
  ArgumentItem Word() {
    ArgumentItem item;
    item.kind = ArgumentItem::Kind::kWord;
    item.offset = static_cast<std::uint32_t>(i_);
    const std::size_t start = i_;
    std::string literal;
    const auto flush = [&item, &literal] {
      if (literal.empty()) return;
      item.parts.push_back({WordPart::Kind::kText, literal, 0});
      literal.clear();
    };
    while (i_ < end_ && !ForcesNewToken(Peek()) && error_.empty()) {
      const char c = Peek();
      if (c == '`' && i_ + 1 < end_) {
        literal += BacktickChar(Peek(1));
        i_ += 2;
      } else if (c == '\'') {
        const std::size_t close = SkipSingleQuoted(t_, i_);
        if (close == npos || close > end_) {
          Fail("an unterminated ' string");
          break;
        }
        for (std::size_t j = i_ + 1; j + 1 < close; ++j) {
          literal += t_[j];
          if (t_[j] == '\'') ++j;  // '' is one quote
        }
        i_ = close;
      } else if (c == '"') {
        const std::size_t close = SkipDoubleQuoted(t_, i_);
        if (close == npos || close > end_) {
          Fail("an unterminated \" string");
          break;
        }
        flush();
        item.parts.push_back({WordPart::Kind::kExpandable, t_.substr(i_ + 1, close - i_ - 2),
                              static_cast<std::uint32_t>(i_ + 1)});
        i_ = close;
      } else if (c == '$' && Peek(1) == '(') {
        const std::size_t close = Group(i_ + 1);
        if (close == npos) {
          Fail("an unclosed $(");
          break;
        }
        flush();
        item.parts.push_back({WordPart::Kind::kSubExpression, t_.substr(i_ + 2, close - i_ - 3),
                              static_cast<std::uint32_t>(i_ + 2)});
        i_ = close;
      } else if (c == '$') {
        std::size_t after = 0;
        const auto name = ScanVariable(t_, i_, after);
        if (name && after <= end_) {
          flush();
          item.parts.push_back({WordPart::Kind::kVariable, *name, static_cast<std::uint32_t>(i_)});
          i_ = after;
        } else {
          literal += c;
          ++i_;
        }
      } else {
        literal += c;
        ++i_;
      }
    }
    flush();
    item.text = t_.substr(start, i_ - start);
    return item;
  }

  const std::string& t_;
  std::size_t i_;
  std::size_t end_;
  std::string error_;
  std::size_t error_at_ = 0;
  std::size_t name_end_ = 0;
};

}  // namespace

std::optional<CommandSyntax> TokenizeCommand(const std::string& text, std::uint32_t start,
                                             std::uint32_t end, std::string& error,
                                             std::uint32_t& error_offset) {
  return Tokenizer(text, start, end).Run(error, error_offset, false);
}

bool CommandExtent(const std::string& text, std::uint32_t start, std::uint32_t& name_end,
                   std::uint32_t& end) {
  Tokenizer tokenizer(text, start, static_cast<std::uint32_t>(text.size()));
  std::string error;
  std::uint32_t error_offset = 0;
  if (!tokenizer.Run(error, error_offset, true)) return false;
  name_end = static_cast<std::uint32_t>(tokenizer.name_end());
  end = static_cast<std::uint32_t>(tokenizer.position());
  return true;
}

}  // namespace dxshim::test::node_standin::powershell
