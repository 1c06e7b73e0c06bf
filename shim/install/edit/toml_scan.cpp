#include "shim/install/edit/toml_scan.h"

#include <algorithm>
#include <cstdint>

#include "shim/install/edit/command_line.h"
#include "shim/install/edit/text_encoding.h"

namespace dxshim::install {
namespace {

std::size_t LineAt(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return static_cast<std::size_t>(
             std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) +
         1;
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsBareKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

class Reader {
 public:
  Reader(std::string_view text, std::string_view kind) : text_(text), kind_(kind) {}

  TomlScan Read() {
    TomlScan scan;
    TomlKeyPath table;
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;
    while (i_ < text_.size()) {
      const std::size_t line_begin = i_;
      SkipBlanks();
      if (AtLineEnd()) {
        EndLine();
        continue;
      }
      if (Peek() == '[') {
        TomlHeader header;
        header.line_begin = line_begin;
        ++i_;
        header.array = Peek() == '[';
        if (header.array) ++i_;
        header.name = ReadKey();
        if (Peek() != ']' || (header.array && text_.substr(i_, 2) != "]]")) {
          FailTomlAt(text_, kind_, i_, "a table header without its closing bracket");
        }
        i_ += header.array ? 2 : 1;
        SkipBlanks();
        header.has_line_break = EndLine();
        header.next_line = i_;
        table = header.name;
        scan.headers.push_back(std::move(header));
        continue;
      }
      TomlEntry entry;
      entry.table = table;
      entry.line_begin = line_begin;
      entry.key_begin = i_;
      entry.key = ReadKey();
      if (Peek() != '=') FailTomlAt(text_, kind_, i_, "expected `key = value`");
      ++i_;
      SkipBlanks();
      entry.value_begin = i_;
      SkipValue();
      entry.value_end = i_;
      SkipBlanks();
      EndLine();
      scan.entries.push_back(std::move(entry));
    }
    return scan;
  }

  // A basic or literal string from i_, decoded (one line).
  std::string ReadString() {
    const char quote = Peek();
    const std::size_t begin = i_;
    ++i_;
    std::string out;
    while (true) {
      if (i_ >= text_.size() || text_[i_] == '\n' || text_[i_] == '\r') {
        FailTomlAt(text_, kind_, begin, "unterminated string");
      }
      const char c = text_[i_++];
      if (c == quote) break;
      if (c != '\\' || quote == '\'') {
        out += c;
        continue;
      }
      if (i_ >= text_.size()) FailTomlAt(text_, kind_, begin, "unterminated string");
      const char e = text_[i_++];
      switch (e) {
        case 'b':
          out += '\b';
          break;
        case 't':
          out += '\t';
          break;
        case 'n':
          out += '\n';
          break;
        case 'f':
          out += '\f';
          break;
        case 'r':
          out += '\r';
          break;
        case 'e':
          out += '\x1b';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i_ + digits > text_.size()) FailTomlAt(text_, kind_, begin, "a short \\u escape");
          std::uint32_t code = 0;
          for (std::size_t d = 0; d < digits; ++d) {
            const char h = text_[i_++];
            code <<= 4;
            if (h >= '0' && h <= '9') {
              code |= static_cast<std::uint32_t>(h - '0');
            } else if (h >= 'a' && h <= 'f') {
              code |= static_cast<std::uint32_t>(h - 'a' + 10);
            } else if (h >= 'A' && h <= 'F') {
              code |= static_cast<std::uint32_t>(h - 'A' + 10);
            } else {
              FailTomlAt(text_, kind_, begin, "a bad hexadecimal escape in a string");
            }
          }
          AppendUtf8(out, code);
          break;
        }
        default:
          FailTomlAt(text_, kind_, begin, std::string("an unknown escape \\") + e + " in a string");
      }
    }
    return out;
  }

  std::size_t Position() const { return i_; }
  void SetPosition(std::size_t i) { i_ = i; }

 private:
  char Peek() const { return i_ < text_.size() ? text_[i_] : '\0'; }
  void SkipBlanks() {
    while (i_ < text_.size() && IsBlank(text_[i_])) ++i_;
  }
  bool AtLineEnd() const {
    return i_ >= text_.size() || text_[i_] == '#' || text_[i_] == '\n' ||
           text_.substr(i_, 2) == "\r\n";
  }
  // Past an optional comment and the line break; true when there was a line break.
  bool EndLine() {
    if (Peek() == '#') {
      while (i_ < text_.size() && text_[i_] != '\n' && text_[i_] != '\r') ++i_;
    }
    if (i_ >= text_.size()) return false;
    if (text_[i_] == '\n') {
      ++i_;
      return true;
    }
    if (text_.substr(i_, 2) == "\r\n") {
      i_ += 2;
      return true;
    }
    FailTomlAt(text_, kind_, i_, "unexpected text after a value or header (one per line)");
  }
  // Whitespace, line breaks and comments (inside arrays and inline tables).
  void SkipSpace() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (IsBlank(c) || c == '\n' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  TomlKeyPath ReadKey() {
    TomlKeyPath path;
    while (true) {
      SkipBlanks();
      const char c = Peek();
      if (c == '"' || c == '\'') {
        path.push_back(ReadString());
      } else {
        const std::size_t begin = i_;
        while (i_ < text_.size() && IsBareKeyChar(text_[i_])) ++i_;
        if (i_ == begin) FailTomlAt(text_, kind_, begin, "expected a key");
        path.emplace_back(text_.substr(begin, i_ - begin));
      }
      SkipBlanks();
      if (Peek() != '.') return path;
      ++i_;
    }
  }

  void SkipMultiline(std::string_view delimiter) {
    const std::size_t begin = i_;
    i_ += 3;
    while (true) {
      if (i_ >= text_.size()) FailTomlAt(text_, kind_, begin, "unterminated multi-line string");
      if (delimiter == "\"\"\"" && text_[i_] == '\\') {
        i_ += 2;
        continue;
      }
      if (text_.substr(i_, 3) == delimiter) {
        i_ += 3;
        // Up to two quotes of the delimiter's kind may end the content.
        for (int extra = 0; extra < 2 && Peek() == delimiter[0]; ++extra) ++i_;
        return;
      }
      ++i_;
    }
  }

  void SkipValue() {
    const std::size_t begin = i_;
    const char c = Peek();
    if (text_.substr(i_, 3) == "\"\"\"" || text_.substr(i_, 3) == "'''") {
      SkipMultiline(text_.substr(i_, 3));
    } else if (c == '"' || c == '\'') {
      ReadString();
    } else if (c == '[') {
      ++i_;
      while (true) {
        SkipSpace();
        if (Peek() == ']') break;
        SkipValue();
        SkipSpace();
        if (Peek() == ',') {
          ++i_;
          continue;
        }
        if (Peek() != ']') FailTomlAt(text_, kind_, begin, "an array without its closing bracket");
      }
      ++i_;
    } else if (c == '{') {
      ++i_;
      SkipSpace();
      if (Peek() != '}') {
        while (true) {
          ReadKey();
          if (Peek() != '=')
            FailTomlAt(text_, kind_, i_, "expected `key = value` in an inline table");
          ++i_;
          SkipBlanks();
          SkipValue();
          SkipSpace();
          if (Peek() == ',') {
            ++i_;
            SkipSpace();
            continue;
          }
          if (Peek() != '}')
            FailTomlAt(text_, kind_, begin, "an inline table without its closing brace");
          break;
        }
      }
      ++i_;
    } else {
      // A number, bool or date: up to a delimiter (a date and a time may be split by a space).
      const auto delimiter = [&](char x) {
        return IsBlank(x) || x == '\n' || x == '\r' || x == '#' || x == ',' || x == ']' || x == '}';
      };
      while (i_ < text_.size() && !delimiter(text_[i_])) ++i_;
      if (i_ == begin) FailTomlAt(text_, kind_, begin, "expected a value");
      const std::string_view token = text_.substr(begin, i_ - begin);
      if (token.size() == 10 && token[4] == '-' && token[7] == '-' && Peek() == ' ' &&
          i_ + 1 < text_.size() && text_[i_ + 1] >= '0' && text_[i_ + 1] <= '9') {
        ++i_;
        while (i_ < text_.size() && !delimiter(text_[i_])) ++i_;
      }
    }
  }

  std::string_view text_;
  std::string_view kind_;
  std::size_t i_ = 0;
};

}  // namespace

[[noreturn]] void FailTomlAt(std::string_view text, std::string_view kind, std::size_t offset,
                             std::string_view problem) {
  throw EditError(std::string(kind) + " line " + std::to_string(LineAt(text, offset)) + ": " +
                  std::string(problem));
}

TomlScan ScanToml(std::string_view text, std::string_view kind) {
  return Reader(text, kind).Read();
}

std::string ReadTomlString(std::string_view text, std::size_t at, std::string_view kind) {
  Reader reader(text, kind);
  reader.SetPosition(at);
  return reader.ReadString();
}

}  // namespace dxshim::install
