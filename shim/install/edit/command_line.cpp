#include "shim/install/edit/command_line.h"

#include <limits>

#include "shim/base/ascii_case.h"

namespace dxshim::install {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

struct Scan {
  Word word;
  bool in_quotes = false;  // at word.end
  WordPoint stop;          // where `limit` characters were reached (when they were)
  bool stopped = false;
};

// One argument after the program, from `begin` (not a blank), by the C runtime's rules; stops
// early once `limit` characters of text were produced.
Scan ScanArgument(std::string_view line, std::size_t begin,
                  std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  Scan scan;
  std::string& out = scan.word.text;
  bool& in_quotes = scan.in_quotes;
  std::size_t i = begin;
  const auto reached = [&](std::size_t offset) {
    if (!scan.stopped && out.size() >= limit) {
      scan.stop = {offset, in_quotes};
      scan.stopped = true;
    }
    return scan.stopped;
  };
  while (i < line.size()) {
    char c = line[i];
    if (!in_quotes && IsBlank(c)) break;
    if (c == '\\') {
      std::size_t j = i;
      while (j < line.size() && line[j] == '\\') ++j;
      const std::size_t count = j - i;
      if (j < line.size() && line[j] == '"') {
        out.append(count / 2, '\\');
        if (count % 2 == 1) {
          out += '"';
          scan.word.quoted = true;
          i = j + 1;
          if (reached(i)) return scan;
          continue;
        }
        if (count > 0 && reached(j)) return scan;
        i = j;
        c = '"';
      } else {
        out.append(count, '\\');
        i = j;
        if (reached(i)) return scan;
        continue;
      }
    }
    if (c == '"') {
      scan.word.quoted = true;
      if (in_quotes && i + 1 < line.size() && line[i + 1] == '"') {
        out += '"';
        i += 2;
        if (reached(i)) return scan;
        continue;
      }
      in_quotes = !in_quotes;
      ++i;
      continue;
    }
    out += c;
    ++i;
    if (reached(i)) return scan;
  }
  scan.word.begin = begin;
  scan.word.end = i;
  return scan;
}

// The program word (CommandLineToArgvW): from a quote to the next quote, or up to a blank.
Scan ScanProgram(std::string_view line, std::size_t begin) {
  Scan scan;
  scan.word.begin = begin;
  std::size_t i = begin;
  if (line[i] == '"') {
    scan.word.quoted = true;
    const std::size_t close = line.find('"', i + 1);
    if (close == std::string_view::npos) {
      scan.word.text = std::string(line.substr(i + 1));
      scan.word.end = line.size();
      scan.in_quotes = true;
    } else {
      scan.word.text = std::string(line.substr(i + 1, close - i - 1));
      scan.word.end = close + 1;
    }
    return scan;
  }
  while (i < line.size() && !IsBlank(line[i])) ++i;
  scan.word.text = std::string(line.substr(begin, i - begin));
  scan.word.end = i;
  return scan;
}

struct Split {
  std::vector<Word> words;
  bool ends_in_quotes = false;
};

// `program`: the first word is a program name (SplitCommandLine), else an argument too.
Split SplitAll(std::string_view line, bool program) {
  Split split;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i >= line.size()) break;
    Scan scan = split.words.empty() && program ? ScanProgram(line, i) : ScanArgument(line, i);
    i = scan.word.end;
    split.ends_in_quotes = scan.in_quotes;
    split.words.push_back(std::move(scan.word));
  }
  return split;
}

}  // namespace

std::vector<Word> SplitCommandLine(std::string_view line) { return SplitAll(line, true).words; }

std::vector<Word> SplitArguments(std::string_view line) { return SplitAll(line, false).words; }

bool EndsInsideQuotes(std::string_view line) { return SplitAll(line, true).ends_in_quotes; }

bool ArgumentsEndInsideQuotes(std::string_view line) {
  return SplitAll(line, false).ends_in_quotes;
}

WordPoint SplitWord(std::string_view line, const Word& word, std::size_t chars) {
  if (chars == 0) return {word.begin, false};
  Scan scan = ScanArgument(line.substr(0, word.end), word.begin, chars);
  if (!scan.stopped) return {word.end, scan.in_quotes};
  return scan.stop;
}

std::string QuoteArgumentAlways(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    std::size_t j = i;
    while (j < text.size() && text[j] == '\\') ++j;
    const std::size_t count = j - i;
    if (j == text.size()) {
      out.append(count * 2, '\\');  // before the closing quote
      break;
    }
    if (text[j] == '"') {
      out.append(count * 2 + 1, '\\');
    } else {
      out.append(count, '\\');
    }
    out += text[j];
    i = j + 1;
  }
  out += '"';
  return out;
}

std::string QuoteArgument(std::string_view text) {
  if (!text.empty() && text.find_first_of(" \t\"") == std::string_view::npos) {
    return std::string(text);
  }
  return QuoteArgumentAlways(text);
}

std::string FileNameOf(std::string_view path) {
  const auto slash = path.find_last_of("\\/");
  return ToLowerAscii(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace dxshim::install
