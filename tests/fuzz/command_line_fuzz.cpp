// libFuzzer target: Windows command lines as the installer splits and quotes them
// (shim/install/edit/command_line.h). The input is one command line. Properties, for any input:
//   - the words' spans lie in the line in order, and the bytes between them are blanks (none after
//     a quoted program, which ends at its closing quote);
//   - each argument's span, split on its own after a program, gives back the same text;
//   - QuoteArgument and QuoteArgumentAlways of any text (each argument, and the line itself) split
//     back to exactly that text, alone and next to another quoted argument, and leave no quote
//     open;
//   - the line rebuilt from its program and its arguments quoted again splits to the same words;
//   - SplitWord at the `=` of a `--name=value` argument: the bytes of the span up to that point
//     split to the text up to `=`, with a quote open there exactly when SplitWord says so;
//   - EndsInsideQuotes is false exactly when a word appended after a blank splits as its own word;
//   - SplitArguments and ArgumentsEndInsideQuotes (a line with no program) read the line as the
//     arguments after a program.
#include <cstdint>
#include <string>
#include <vector>

#include "shim/install/edit/command_line.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using dxshim::fuzz::Check;
using dxshim::install::Word;

std::vector<std::string> Texts(const std::vector<Word>& words) {
  std::vector<std::string> texts;
  for (const Word& word : words) texts.push_back(word.text);
  return texts;
}

void CheckQuoting(const std::string& text) {
  for (const std::string& quoted :
       {dxshim::install::QuoteArgument(text), dxshim::install::QuoteArgumentAlways(text)}) {
    const auto alone = Texts(dxshim::install::SplitCommandLine("p " + quoted));
    Check(alone == std::vector<std::string>{"p", text}, "a quoted argument splits back");
    Check(!dxshim::install::EndsInsideQuotes("p " + quoted), "a quoted argument closes its quotes");
    const auto pair = Texts(dxshim::install::SplitCommandLine("p " + quoted + " " + quoted));
    Check(pair == std::vector<std::string>{"p", text, text}, "quoted arguments split apart");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line = dxshim::fuzz::InputText(data, size);
  const std::vector<Word> words = dxshim::install::SplitCommandLine(line);
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };

  std::size_t at = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const Word& word = words[i];
    Check(word.begin >= at && word.begin < word.end && word.end <= line.size(), "spans in order");
    const bool after_quoted_program = i == 1 && words[0].quoted && word.begin == at;
    for (std::size_t b = at; b < word.begin; ++b) Check(blank(line[b]), "blanks between words");
    Check(i == 0 || after_quoted_program || word.begin > at || at == 0, "words are apart");
    at = word.end;
    if (i == 0) continue;
    const auto alone =
        dxshim::install::SplitCommandLine("p " + line.substr(word.begin, word.end - word.begin));
    Check(alone.size() == 2 && alone[1].text == word.text, "an argument's span splits alone");
    CheckQuoting(word.text);

    const auto eq = word.text.find('=');
    if (word.text.rfind("--", 0) == 0 && eq != std::string::npos) {
      const auto point = dxshim::install::SplitWord(line, word, eq + 1);
      Check(point.offset >= word.begin && point.offset <= word.end, "SplitWord within the word");
      const std::string head = "p " + line.substr(word.begin, point.offset - word.begin);
      const auto split = dxshim::install::SplitCommandLine(head);
      Check(split.size() == 2 && split[1].text == word.text.substr(0, eq + 1),
            "SplitWord ends just past the `=`");
      Check(dxshim::install::EndsInsideQuotes(head) == point.in_quotes, "SplitWord's quote state");
    }
  }
  for (std::size_t b = at; b < line.size(); ++b) Check(blank(line[b]), "only blanks at the end");
  CheckQuoting(line);

  if (!words.empty()) {
    // The program in quotes as they are (CommandLineToArgvW reads it with no escapes, so a
    // program name holding a quote cannot be quoted again).
    std::string rebuilt = "\"" + words[0].text + "\"";
    if (words[0].text.find('"') == std::string::npos) {
      for (std::size_t i = 1; i < words.size(); ++i) {
        rebuilt += " " + dxshim::install::QuoteArgument(words[i].text);
      }
      Check(Texts(dxshim::install::SplitCommandLine(rebuilt)) == Texts(words),
            "the line rebuilt from its words splits the same");
    }
  }

  // Arguments with no program: as they split after one.
  auto after_program = Texts(dxshim::install::SplitCommandLine("p " + line));
  after_program.erase(after_program.begin());
  Check(Texts(dxshim::install::SplitArguments(line)) == after_program,
        "SplitArguments splits as after a program");
  Check(dxshim::install::ArgumentsEndInsideQuotes(line) ==
            dxshim::install::EndsInsideQuotes("p " + line),
        "ArgumentsEndInsideQuotes as after a program");

  const auto appended = Texts(dxshim::install::SplitCommandLine(line + " x"));
  auto expected = Texts(words);
  expected.push_back("x");
  Check((appended == expected) == !dxshim::install::EndsInsideQuotes(line),
        "EndsInsideQuotes says whether an appended word stays apart");
  return 0;
}
