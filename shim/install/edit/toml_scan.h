// A minimal TOML reader for the edits dxshim makes in containerd's config.toml: it finds every
// table header ([x], [x.y], [[x]]) and every `key = value` with the byte offsets of its value,
// skipping every TOML value form (strings of all four kinds, arrays, inline tables, numbers,
// dates) and comments, so that an edit can replace exactly the bytes of one value. What it cannot
// read is refused by line (EditError), never guessed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::install {

using TomlKeyPath = std::vector<std::string>;

struct TomlEntry {
  TomlKeyPath table;  // the [table] it is in ({} at the top level)
  TomlKeyPath key;    // the key, dotted parts split
  std::size_t line_begin = 0;
  std::size_t key_begin = 0;
  std::size_t value_begin = 0;
  std::size_t value_end = 0;
};

struct TomlHeader {
  TomlKeyPath name;
  bool array = false;  // [[name]]
  std::size_t line_begin = 0;
  std::size_t next_line = 0;  // just past its line break (the text's size on the last line)
  bool has_line_break = false;
};

struct TomlScan {
  std::vector<TomlEntry> entries;
  std::vector<TomlHeader> headers;
};

// Throws EditError "<kind> line N: <problem>" for text it cannot read.
TomlScan ScanToml(std::string_view text, std::string_view kind);

// The one-line basic or literal string starting at `at` (its opening quote), decoded. Throws
// EditError naming the line for an unterminated string or an unknown escape.
std::string ReadTomlString(std::string_view text, std::size_t at, std::string_view kind);

// "<kind> line N: <problem>" as an EditError.
[[noreturn]] void FailTomlAt(std::string_view text, std::string_view kind, std::size_t offset,
                             std::string_view problem);

}  // namespace dxshim::install
