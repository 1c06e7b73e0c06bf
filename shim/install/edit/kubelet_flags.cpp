#include "shim/install/edit/kubelet_flags.h"

#include <algorithm>

namespace dxshim::install {
namespace {

constexpr std::string_view kKubeadmVariable = "KUBELET_KUBEADM_ARGS";

// kubelet's WordSepNormalizeFunc: `_` in a flag name is `-`.
bool SameFlagName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] == '_' ? '-' : a[i];
    const char y = b[i] == '_' ? '-' : b[i];
    if (x != y) return false;
  }
  return true;
}

// A word that pflag reads as a flag rather than as the value of the flag before it.
bool LooksLikeFlag(std::string_view text) { return text.size() > 1 && text[0] == '-'; }

void CheckName(std::string_view name) {
  if (name.empty() || name.front() == '-' ||
      name.find_first_of(" \t\r\n\"'=\\") != std::string_view::npos) {
    throw EditError("kubelet flag name \"" + std::string(name) +
                    "\" is not a flag name (give it without dashes, e.g. "
                    "container-runtime-endpoint)");
  }
}

std::string FlagText(std::string_view name) { return "--" + std::string(name); }

// A line whose flags start at word 0 has no program (NSSM's AppParameters): its first word is an
// argument, split as the program started with the line splits it.
std::vector<Word> WordsOf(std::string_view line, std::size_t first) {
  return first == 0 ? SplitArguments(line) : SplitCommandLine(line);
}
bool EndsOpen(std::string_view line, std::size_t first) {
  return first == 0 ? ArgumentsEndInsideQuotes(line) : EndsInsideQuotes(line);
}

// The text that replaces a command-line value whose span starts in or out of quotes.
std::string EncodeValue(std::string_view value, bool in_quotes, bool keep_quoted) {
  if (in_quotes) return QuoteArgumentAlways(value).substr(1);  // the quote open before is closed
  return keep_quoted ? QuoteArgumentAlways(value) : QuoteArgument(value);
}

struct Replacement {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string text;
};

std::string Apply(std::string_view text, std::vector<Replacement> replacements) {
  std::sort(replacements.begin(), replacements.end(),
            [](const Replacement& a, const Replacement& b) { return a.begin < b.begin; });
  std::string out;
  std::size_t at = 0;
  for (const Replacement& r : replacements) {
    out.append(text.substr(at, r.begin - at));
    out.append(r.text);
    at = r.end;
  }
  out.append(text.substr(at));
  return out;
}

std::size_t LineNumber(std::string_view text, std::size_t offset) {
  return static_cast<std::size_t>(
             std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) +
         1;
}

}  // namespace

namespace {

// pflag's walk over the words: every occurrence of `name`, and the index of a bare `--` that ends
// the flags (words.size() when there is none).
std::size_t Walk(const std::vector<Word>& words, std::string_view name, std::size_t first,
                 std::vector<FlagValue>* found) {
  for (std::size_t i = first; i < words.size(); ++i) {
    const std::string& text = words[i].text;
    if (text == "--") return i;  // pflag: the rest are arguments
    if (text.size() < 3 || text[0] != '-' || text[1] != '-') continue;
    const std::size_t eq = text.find('=');
    const std::string_view flag =
        std::string_view(text).substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool matches = SameFlagName(flag, name);
    if (eq != std::string::npos) {
      if (matches) found->push_back({text.substr(eq + 1), i, false, false});
      continue;
    }
    const bool has_value = i + 1 < words.size() && !LooksLikeFlag(words[i + 1].text);
    if (matches) {
      if (has_value) {
        found->push_back({words[i + 1].text, i, true, false});
      } else {
        found->push_back({"true", i, false, true});
      }
    }
    if (has_value) ++i;  // the value of this flag is not a flag
  }
  return words.size();
}

}  // namespace

std::vector<FlagValue> FindFlagOccurrences(const std::vector<Word>& words, std::string_view name,
                                           std::size_t first) {
  std::vector<FlagValue> found;
  Walk(words, name, first, &found);
  return found;
}

std::optional<FlagValue> FindFlag(const std::vector<Word>& words, std::string_view name,
                                  std::size_t first) {
  std::vector<FlagValue> found = FindFlagOccurrences(words, name, first);
  if (found.empty()) return std::nullopt;
  return found.back();
}

std::string SetFlag(std::string_view line, std::string_view name, std::string_view value,
                    std::size_t first) {
  CheckName(name);
  const std::vector<Word> words = WordsOf(line, first);
  if (first > words.size()) {
    throw EditError("kubelet command line has " + std::to_string(words.size()) +
                    " words, fewer than the " + std::to_string(first) +
                    " expected before its flags: " + std::string(line));
  }
  std::vector<FlagValue> found;
  const std::size_t end_of_flags = Walk(words, name, first, &found);
  if (found.empty()) {
    const std::string flag = FlagText(name) + "=" + QuoteArgument(value);
    if (end_of_flags < words.size()) {  // before a `--` that ends the flags
      std::string out(line);
      return out.insert(words[end_of_flags].begin, flag + " ");
    }
    if (EndsOpen(line, first)) {
      throw EditError("kubelet command line ends inside an open quote; cannot append --" +
                      std::string(name) + ": " + std::string(line));
    }
    return std::string(line) + " " + flag;
  }
  std::vector<Replacement> replacements;
  for (const FlagValue& flag : found) {
    if (flag.value == value) continue;  // already so (a bare flag is "true"): no byte changes
    const Word& word = words[flag.word];
    if (flag.separate && LooksLikeFlag(value)) {
      // `--name -x` would read as a bare `--name` and a flag `-x`: the pair becomes --name=-x.
      const Word& value_word = words[flag.word + 1];
      replacements.push_back(
          {word.end, value_word.end, "=" + EncodeValue(value, false, value_word.quoted)});
    } else if (flag.separate) {
      const Word& value_word = words[flag.word + 1];
      replacements.push_back(
          {value_word.begin, value_word.end, EncodeValue(value, false, value_word.quoted)});
    } else if (flag.bare) {
      // Where the flag's text ends, which may be inside quotes (`"--config"`): the value goes
      // there, and its encoding closes a quote left open, in place of what followed.
      const WordPoint end = SplitWord(line, word, word.text.size());
      replacements.push_back(
          {end.offset, word.end, "=" + EncodeValue(value, end.in_quotes, false)});
    } else {
      const WordPoint point = SplitWord(line, word, word.text.find('=') + 1);
      const bool was_quoted =
          line.substr(point.offset, word.end - point.offset).find('"') != std::string_view::npos;
      replacements.push_back(
          {point.offset, word.end, EncodeValue(value, point.in_quotes, was_quoted)});
    }
  }
  return Apply(line, std::move(replacements));
}

std::string RemoveFlag(std::string_view line, std::string_view name, std::size_t first) {
  CheckName(name);
  const std::vector<Word> words = WordsOf(line, first);
  std::vector<Replacement> removals;
  for (const FlagValue& flag : FindFlagOccurrences(words, name, first)) {
    std::size_t begin = words[flag.word].begin;
    std::size_t end = flag.separate ? words[flag.word + 1].end : words[flag.word].end;
    while (begin > 0 && (line[begin - 1] == ' ' || line[begin - 1] == '\t')) --begin;
    // Right after an occurrence that starts the line (and took the blanks after it): one removal.
    if (!removals.empty() && begin < removals.back().end) {
      begin = removals.back().begin;
      removals.pop_back();
    }
    if (begin == 0) {
      while (end < line.size() && (line[end] == ' ' || line[end] == '\t')) ++end;
    }
    removals.push_back({begin, end, ""});
  }
  return Apply(line, std::move(removals));
}

std::optional<KubeadmFlags> ReadKubeadmFlags(std::string_view file) {
  std::optional<KubeadmFlags> flags;
  std::size_t line_begin = 0;
  while (line_begin < file.size()) {
    std::size_t line_end = file.find('\n', line_begin);
    if (line_end == std::string_view::npos) line_end = file.size();
    std::size_t content_end = line_end;
    if (content_end > line_begin && file[content_end - 1] == '\r') --content_end;
    std::size_t i = line_begin;
    while (i < content_end && (file[i] == ' ' || file[i] == '\t')) ++i;
    const std::string_view rest = file.substr(i, content_end - i);
    if (rest.substr(0, kKubeadmVariable.size()) == kKubeadmVariable &&
        rest.substr(kKubeadmVariable.size(), 1) == "=") {
      const std::size_t number = LineNumber(file, line_begin);
      const std::string where = "kubeadm-flags.env line " + std::to_string(number) + ": ";
      if (flags) {
        throw EditError(where + std::string(kKubeadmVariable) + " is set a second time");
      }
      const std::size_t open = i + kKubeadmVariable.size() + 1;
      std::size_t close = content_end;
      while (close > open && (file[close - 1] == ' ' || file[close - 1] == '\t')) --close;
      if (open >= content_end || file[open] != '"' || close < open + 2 || file[close - 1] != '"') {
        throw EditError(where + std::string(kKubeadmVariable) +
                        " is not one double-quoted string (kubeadm writes "
                        "KUBELET_KUBEADM_ARGS=\"--flag=value ...\")");
      }
      const std::string_view args = file.substr(open + 1, close - 1 - (open + 1));
      if (args.find('"') != std::string_view::npos) {
        throw EditError(where + std::string(kKubeadmVariable) +
                        " holds a quote inside its value, which its readers do not agree on");
      }
      flags = KubeadmFlags{std::string(args), open + 1, close - 1};
    }
    line_begin = line_end + 1;
  }
  return flags;
}

std::vector<Word> SplitKubeadmArgs(std::string_view args) {
  std::vector<Word> words;
  std::size_t i = 0;
  const auto blank = [&args](std::size_t at) { return args[at] == ' ' || args[at] == '\t'; };
  while (i < args.size()) {
    while (i < args.size() && blank(i)) ++i;
    if (i >= args.size()) break;
    const std::size_t begin = i;
    while (i < args.size() && !blank(i)) ++i;
    words.push_back({std::string(args.substr(begin, i - begin)), begin, i, false});
  }
  return words;
}

std::string SetKubeadmFlag(std::string_view file, std::string_view name, std::string_view value) {
  CheckName(name);
  for (const char c : value) {
    if (c == '"' || c == '\'' || c == '\\' || static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      throw EditError("kubeadm-flags.env cannot carry the value of --" + std::string(name) + " \"" +
                      std::string(value) +
                      "\": KUBELET_KUBEADM_ARGS holds no whitespace, quotes or backslashes "
                      "inside a flag");
    }
  }
  const std::optional<KubeadmFlags> flags = ReadKubeadmFlags(file);
  if (!flags) {
    throw EditError("kubeadm-flags.env has no " + std::string(kKubeadmVariable) +
                    " line to set --" + std::string(name) + " in");
  }
  const std::string& args = flags->args;
  const std::vector<Word> words = SplitKubeadmArgs(args);
  std::vector<FlagValue> found;
  const std::size_t end_of_flags = Walk(words, name, 0, &found);
  std::string new_args;
  if (found.empty() && end_of_flags < words.size()) {  // before a `--` that ends the flags
    new_args = args;
    new_args.insert(words[end_of_flags].begin, FlagText(name) + "=" + std::string(value) + " ");
  } else if (found.empty()) {
    new_args = args;
    if (!new_args.empty() && new_args.back() != ' ' && new_args.back() != '\t') new_args += ' ';
    new_args += FlagText(name) + "=" + std::string(value);
  } else {
    std::vector<Replacement> replacements;
    for (const FlagValue& flag : found) {
      if (flag.value == value) continue;
      const Word& word = words[flag.word];
      if (flag.separate) {
        // As in SetFlag: a value that looks like a flag joins its name (`--name=-x`).
        const Word& value_word = words[flag.word + 1];
        const bool join = LooksLikeFlag(value);
        replacements.push_back({join ? word.end : value_word.begin, value_word.end,
                                (join ? "=" : "") + std::string(value)});
      } else if (flag.bare) {
        replacements.push_back({word.end, word.end, "=" + std::string(value)});
      } else {
        replacements.push_back(
            {word.begin + word.text.find('=') + 1, word.end, std::string(value)});
      }
    }
    new_args = Apply(args, std::move(replacements));
  }
  std::string out(file.substr(0, flags->begin));
  out += new_args;
  out.append(file.substr(flags->end));
  return out;
}

std::optional<std::size_t> KubeletFlagsStart(const std::vector<Word>& words) {
  for (std::size_t at = 0; at < words.size(); ++at) {
    if (FileNameOf(words[at].text) == "kubelet.exe") return at + 1;
  }
  return std::nullopt;
}

}  // namespace dxshim::install
