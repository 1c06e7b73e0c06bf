#include "shim/node/containerd_config.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "shim/base/json_text.h"
#include "shim/node/command_line.h"
#include "shim/node/yaml_text.h"

namespace dxshim::node {
namespace {

constexpr std::string_view kKind = "containerd config.toml";

using KeyPath = std::vector<std::string>;

struct Entry {
  KeyPath table;  // the [table] it is in ({} at the top level)
  KeyPath key;    // the key, dotted parts split
  std::size_t line_begin = 0;
  std::size_t key_begin = 0;
  std::size_t value_begin = 0;
  std::size_t value_end = 0;
};

struct Header {
  KeyPath name;
  bool array = false;  // [[name]]
  std::size_t line_begin = 0;
  std::size_t next_line = 0;  // just past its line break (the text's size on the last line)
  bool has_line_break = false;
};

struct Scan {
  std::vector<Entry> entries;
  std::vector<Header> headers;
};

std::size_t LineAt(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return static_cast<std::size_t>(
             std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) +
         1;
}

[[noreturn]] void Fail(std::string_view text, std::size_t offset, std::string_view problem) {
  throw EditError(std::string(kKind) + " line " + std::to_string(LineAt(text, offset)) + ": " +
                  std::string(problem));
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsBareKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

void AppendUtf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  Scan Read() {
    Scan scan;
    KeyPath table;
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;
    while (i_ < text_.size()) {
      const std::size_t line_begin = i_;
      SkipBlanks();
      if (AtLineEnd()) {
        EndLine();
        continue;
      }
      if (Peek() == '[') {
        Header header;
        header.line_begin = line_begin;
        ++i_;
        header.array = Peek() == '[';
        if (header.array) ++i_;
        header.name = ReadKey();
        if (Peek() != ']' || (header.array && text_.substr(i_, 2) != "]]")) {
          Fail(text_, i_, "a table header without its closing bracket");
        }
        i_ += header.array ? 2 : 1;
        SkipBlanks();
        header.has_line_break = EndLine();
        header.next_line = i_;
        table = header.name;
        scan.headers.push_back(std::move(header));
        continue;
      }
      Entry entry;
      entry.table = table;
      entry.line_begin = line_begin;
      entry.key_begin = i_;
      entry.key = ReadKey();
      if (Peek() != '=') Fail(text_, i_, "expected `key = value`");
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
        Fail(text_, begin, "unterminated string");
      }
      const char c = text_[i_++];
      if (c == quote) break;
      if (c != '\\' || quote == '\'') {
        out += c;
        continue;
      }
      if (i_ >= text_.size()) Fail(text_, begin, "unterminated string");
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
          if (i_ + digits > text_.size()) Fail(text_, begin, "a short \\u escape");
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
              Fail(text_, begin, "a bad hexadecimal escape in a string");
            }
          }
          AppendUtf8(out, code);
          break;
        }
        default:
          Fail(text_, begin, std::string("an unknown escape \\") + e + " in a string");
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
    Fail(text_, i_, "unexpected text after a value or header (one per line)");
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

  KeyPath ReadKey() {
    KeyPath path;
    while (true) {
      SkipBlanks();
      const char c = Peek();
      if (c == '"' || c == '\'') {
        path.push_back(ReadString());
      } else {
        const std::size_t begin = i_;
        while (i_ < text_.size() && IsBareKeyChar(text_[i_])) ++i_;
        if (i_ == begin) Fail(text_, begin, "expected a key");
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
      if (i_ >= text_.size()) Fail(text_, begin, "unterminated multi-line string");
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
        if (Peek() != ']') Fail(text_, begin, "an array without its closing bracket");
      }
      ++i_;
    } else if (c == '{') {
      ++i_;
      SkipSpace();
      if (Peek() != '}') {
        while (true) {
          ReadKey();
          if (Peek() != '=') Fail(text_, i_, "expected `key = value` in an inline table");
          ++i_;
          SkipBlanks();
          SkipValue();
          SkipSpace();
          if (Peek() == ',') {
            ++i_;
            SkipSpace();
            continue;
          }
          if (Peek() != '}') Fail(text_, begin, "an inline table without its closing brace");
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
      if (i_ == begin) Fail(text_, begin, "expected a value");
      const std::string_view token = text_.substr(begin, i_ - begin);
      if (token.size() == 10 && token[4] == '-' && token[7] == '-' && Peek() == ' ' &&
          i_ + 1 < text_.size() && text_[i_ + 1] >= '0' && text_[i_ + 1] <= '9') {
        ++i_;
        while (i_ < text_.size() && !delimiter(text_[i_])) ++i_;
      }
    }
  }

  std::string_view text_;
  std::size_t i_ = 0;
};

const KeyPath kGrpc = {"grpc"};
// containerd 2.3 (config version 4) moved the address into its gRPC server plugin's table
// (cmd/containerd/command/config.go; a top-level [grpc] is read only when migrating version 2
// and 3 files).
const KeyPath kGrpcPlugin = {"plugins", "io.containerd.server.v1.grpc"};
const KeyPath kAddress = {"address"};
const KeyPath kVersion = {"version"};

std::string TableName(const KeyPath& table) {
  return table == kGrpc ? "[grpc]" : "[plugins.'io.containerd.server.v1.grpc']";
}

struct Found {
  Scan scan;
  KeyPath table = kGrpc;  // where the address lives for this file's config version
  std::optional<std::size_t> header_index;   // [grpc] in scan.headers
  std::optional<std::size_t> address_index;  // its address in scan.entries
  const Header* header() const { return header_index ? &scan.headers[*header_index] : nullptr; }
  const Entry* address() const { return address_index ? &scan.entries[*address_index] : nullptr; }
};

// Reads the file and finds [grpc] and its address, refusing the forms that it cannot edit.
Found Find(std::string_view toml) {
  Found found;
  found.scan = Reader(toml).Read();
  for (const Entry& entry : found.scan.entries) {
    if (!entry.table.empty() || entry.key != kVersion) continue;
    const std::string_view raw =
        toml.substr(entry.value_begin, entry.value_end - entry.value_begin);
    if (raw.size() == 1 && raw[0] >= '4' && raw[0] <= '9') found.table = kGrpcPlugin;
  }
  const std::string name = TableName(found.table);
  for (std::size_t i = 0; i < found.scan.headers.size(); ++i) {
    const Header& header = found.scan.headers[i];
    if (header.name != found.table) continue;
    if (header.array) Fail(toml, header.line_begin, name + " is an array of tables");
    if (found.header_index) Fail(toml, header.line_begin, name + " is defined a second time");
    found.header_index = i;
  }
  for (std::size_t i = 0; i < found.scan.entries.size(); ++i) {
    const Entry& entry = found.scan.entries[i];
    if (entry.table.empty() && !entry.key.empty() && entry.key[0] == "grpc") {
      Fail(toml, entry.key_begin,
           entry.key.size() > 1
               ? "grpc is set by a dotted key at the top level; dxshim edits a [grpc] table only"
               : "grpc is set as a value (an inline table?) at the top level; dxshim edits a "
                 "[grpc] table only");
    }
    if (entry.table == found.table && !entry.key.empty() && entry.key[0] == "address") {
      if (entry.key != kAddress) Fail(toml, entry.key_begin, name + " address has dotted parts");
      if (found.address_index) {
        Fail(toml, entry.key_begin, name + " address is set a second time");
      }
      found.address_index = i;
    }
  }
  return found;
}

std::string DecodeAddress(std::string_view toml, const Entry& address) {
  const std::string_view value =
      toml.substr(address.value_begin, address.value_end - address.value_begin);
  if (value.substr(0, 3) == "\"\"\"" || value.substr(0, 3) == "'''") {
    Fail(toml, address.value_begin,
         "[grpc] address is a multi-line string; dxshim reads one-line strings only");
  }
  if (value.empty() || (value[0] != '"' && value[0] != '\'')) {
    Fail(toml, address.value_begin, "[grpc] address is not a string");
  }
  Reader reader(toml);
  reader.SetPosition(address.value_begin);
  return reader.ReadString();
}

// A TOML basic string: JSON's escapes (\", \\, \n, \uXXXX, ...) are TOML's too.
std::string BasicString(std::string_view value) { return JsonString(value); }

bool LiteralCarries(std::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == '\'' || (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

std::string IndentOf(std::string_view toml, const Entry& entry) {
  const std::string_view indent = toml.substr(entry.line_begin, entry.key_begin - entry.line_begin);
  return indent.find_first_not_of(" \t") == std::string_view::npos ? std::string(indent) : "";
}

// Every key but the address, with its raw value, for the self-check.
std::vector<std::string> OtherKeys(std::string_view toml, const Scan& scan, const KeyPath& table) {
  std::vector<std::string> keys;
  for (const Entry& entry : scan.entries) {
    if (entry.table == table && entry.key == kAddress) continue;
    std::string line;
    for (const std::string& part : entry.table) line += "[" + part + "]";
    for (const std::string& part : entry.key) line += "." + part;
    line += " = ";
    line += toml.substr(entry.value_begin, entry.value_end - entry.value_begin);
    keys.push_back(std::move(line));
  }
  return keys;
}

}  // namespace

std::optional<std::string> ReadGrpcAddress(std::string_view toml) {
  const Found found = Find(toml);
  if (!found.address()) return std::nullopt;
  return DecodeAddress(toml, *found.address());
}

std::string SetGrpcAddress(std::string_view toml, std::string_view pipe_path) {
  const Found found = Find(toml);
  std::string out;
  if (found.address()) {
    const Entry& address = *found.address();
    if (DecodeAddress(toml, address) == pipe_path) return std::string(toml);
    const bool literal = toml[address.value_begin] == '\'' && LiteralCarries(pipe_path);
    out = std::string(toml.substr(0, address.value_begin));
    out += literal ? "'" + std::string(pipe_path) + "'" : BasicString(pipe_path);
    out.append(toml.substr(address.value_end));
  } else {
    const std::string eol = LineEnding(toml);
    const std::string line = "address = " + BasicString(pipe_path);
    std::string indent;
    bool indent_found = false;
    for (const Entry& entry : found.scan.entries) {
      if (!entry.table.empty() && (entry.table == found.table || !indent_found)) {
        indent = IndentOf(toml, entry);
        indent_found = true;
        if (entry.table == found.table) break;
      }
    }
    if (found.header()) {
      const Header& header = *found.header();
      out = std::string(toml.substr(0, header.next_line));
      if (!header.has_line_break) out += eol;
      out += indent + line;
      if (header.has_line_break) out += eol;
      out.append(toml.substr(header.next_line));
    } else {
      out = std::string(toml);
      const std::size_t bom = toml.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
      if (out.size() > bom) {
        if (out.back() != '\n') out += eol;
        const std::size_t last = out.size() - eol.size();
        if (last < eol.size() || out.substr(last - eol.size(), eol.size()) != eol) out += eol;
      }
      out += (found.table == kGrpc ? "[grpc]" : "[plugins.'io.containerd.server.v1.grpc']") + eol +
             indent + line + eol;
    }
  }

  // The self-check: the address reads `pipe_path`, every other key as before.
  const std::string failed =
      std::string(kKind) + ": setting " + TableName(found.table) + " address would ";
  Found after;
  try {
    after = Find(out);
  } catch (const EditError& error) {
    throw EditError(failed + "break the file (" + error.what() + "); not written");
  }
  if (!after.address() || DecodeAddress(out, *after.address()) != pipe_path) {
    throw EditError(failed + "not read back as the path set; not written");
  }
  if (OtherKeys(out, after.scan, after.table) != OtherKeys(toml, found.scan, found.table)) {
    throw EditError(failed + "change other keys; not written");
  }
  return out;
}

}  // namespace dxshim::node
