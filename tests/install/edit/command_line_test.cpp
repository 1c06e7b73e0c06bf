// Windows command lines split as the C runtime splits them (quotes, backslash runs, "" inside
// quotes, CommandLineToArgvW's program rule), with the byte span of every word, and arguments
// quoted so that they split back unchanged.
#include "shim/install/edit/command_line.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace dxshim::install {
namespace {

std::vector<std::string> Texts(std::string_view line) {
  std::vector<std::string> texts;
  for (const Word& word : SplitCommandLine(line)) texts.push_back(word.text);
  return texts;
}

using Args = std::vector<std::string>;

TEST(NodeCommandLine, NativeKubeletImagePath) {
  const std::string line =
      R"("C:\k\kubelet.exe" --config="C:\Program Files\kubelet\config.yaml" )"
      R"(--container-runtime-endpoint=npipe://./pipe/containerd-containerd --hostname-override=node1)";
  const std::vector<Word> words = SplitCommandLine(line);
  ASSERT_EQ(words.size(), 4u);
  EXPECT_EQ(words[0].text, R"(C:\k\kubelet.exe)");
  EXPECT_EQ(words[0].begin, 0u);
  EXPECT_EQ(words[0].end, 18u);
  EXPECT_TRUE(words[0].quoted);
  EXPECT_EQ(words[1].text, R"(--config=C:\Program Files\kubelet\config.yaml)");
  EXPECT_EQ(line.substr(words[1].begin, words[1].end - words[1].begin),
            R"(--config="C:\Program Files\kubelet\config.yaml")");
  EXPECT_TRUE(words[1].quoted);
  EXPECT_EQ(words[2].text, "--container-runtime-endpoint=npipe://./pipe/containerd-containerd");
  EXPECT_FALSE(words[2].quoted);
  EXPECT_EQ(words[3].text, "--hostname-override=node1");
  EXPECT_EQ(words[3].end, line.size());
}

TEST(NodeCommandLine, EksServiceHostLine) {
  const std::string line =
      R"("C:\Program Files\Amazon\EKS\bin\EKS-WindowsServiceHost.exe" kubelet )"
      R"("C:\Program Files\Kubernetes\kubelet.exe" --config="C:\ProgramData\kubernetes\kubelet-config.json" )"
      R"(--kubeconfig="C:\ProgramData\kubernetes\kubeconfig")";
  EXPECT_EQ(Texts(line), (Args{R"(C:\Program Files\Amazon\EKS\bin\EKS-WindowsServiceHost.exe)",
                               "kubelet", R"(C:\Program Files\Kubernetes\kubelet.exe)",
                               R"(--config=C:\ProgramData\kubernetes\kubelet-config.json)",
                               R"(--kubeconfig=C:\ProgramData\kubernetes\kubeconfig)"}));
}

TEST(NodeCommandLine, ArgumentRulesOfTheCRuntime) {
  EXPECT_EQ(Texts(R"(p "a b" c)"), (Args{"p", "a b", "c"}));
  EXPECT_EQ(Texts("p\ta\t\tb  "), (Args{"p", "a", "b"}));
  // Backslashes not before a quote are literal.
  EXPECT_EQ(Texts(R"(p a\\b C:\k\)"), (Args{"p", R"(a\\b)", R"(C:\k\)"}));
  // 2n+1 backslashes + quote: n backslashes and a literal quote.
  EXPECT_EQ(Texts(R"(p a\"b a\\\"b)"), (Args{"p", R"(a"b)", R"(a\"b)"}));
  // 2n backslashes + quote: n backslashes, and the quote toggles.
  EXPECT_EQ(Texts(R"(p a\\"b c" d)"), (Args{"p", R"(a\b c)", "d"}));
  EXPECT_EQ(Texts(R"(p a\\\\"b c")"), (Args{"p", R"(a\\b c)"}));
  // "" inside quotes: a literal quote, still inside the quotes.
  EXPECT_EQ(Texts(R"(p "a""b c" d)"), (Args{"p", R"(a"b c)", "d"}));
  EXPECT_EQ(Texts(R"(p "" x)"), (Args{"p", "", "x"}));
  EXPECT_EQ(Texts(R"(p a"b"c)"), (Args{"p", "abc"}));
  // The classic trap: a path ending with a backslash before the closing quote.
  EXPECT_EQ(Texts(R"(p "C:\Program Files\" --x=1)"), (Args{"p", R"(C:\Program Files" --x=1)"}));
  // An open quote runs to the end of the line.
  EXPECT_EQ(Texts(R"(p "a b)"), (Args{"p", "a b"}));
}

TEST(NodeCommandLine, ProgramRuleOfCommandLineToArgvW) {
  // No backslash processing in the program name; it ends at the closing quote.
  EXPECT_EQ(Texts(R"("C:\dir\"x y)"), (Args{R"(C:\dir\)", "x", "y"}));
  EXPECT_EQ(Texts(R"(C:\k\kubelet.exe --a)"), (Args{R"(C:\k\kubelet.exe)", "--a"}));
  EXPECT_EQ(Texts(R"(C:\a"b c)"), (Args{R"(C:\a"b)", "c"}));
  EXPECT_EQ(Texts(R"("C:\no close)"), (Args{R"(C:\no close)"}));
  // Leading blanks are skipped; a blank line has no words.
  const std::vector<Word> words = SplitCommandLine("  kubelet.exe");
  ASSERT_EQ(words.size(), 1u);
  EXPECT_EQ(words[0].begin, 2u);
  EXPECT_TRUE(SplitCommandLine("").empty());
  EXPECT_TRUE(SplitCommandLine(" \t ").empty());
}

TEST(NodeCommandLine, QuoteArgumentQuotesOnlyWhenNeeded) {
  EXPECT_EQ(QuoteArgument("npipe://./pipe/dxshim"), "npipe://./pipe/dxshim");
  EXPECT_EQ(QuoteArgument(R"(C:\k\)"), R"(C:\k\)");
  EXPECT_EQ(QuoteArgument(""), R"("")");
  EXPECT_EQ(QuoteArgument("a b"), R"("a b")");
  EXPECT_EQ(QuoteArgument("a\tb"), "\"a\tb\"");
  EXPECT_EQ(QuoteArgument(R"(C:\Program Files\)"), R"("C:\Program Files\\")");
  EXPECT_EQ(QuoteArgument(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(QuoteArgument(R"(a\"b)"), R"("a\\\"b")");
  EXPECT_EQ(QuoteArgumentAlways("plain"), R"("plain")");
}

TEST(NodeCommandLine, QuotedArgumentsSplitBackUnchanged) {
  for (const std::string text :
       {"", "a", "a b", R"(a"b)", R"(a\)", R"(a\ b\)", R"(\\")", R"(C:\Program Files\)", "\t",
        R"("")", R"(\\server\share\a b\\)", R"(x\\\"y z)", "--config=C:\\a b"}) {
    for (const std::string& quoted : {QuoteArgument(text), QuoteArgumentAlways(text)}) {
      const std::vector<Word> words = SplitCommandLine("p " + quoted + " next");
      ASSERT_EQ(words.size(), 3u) << quoted;
      EXPECT_EQ(words[1].text, text) << quoted;
      EXPECT_EQ(words[2].text, "next") << quoted;
    }
  }
}

// Every string of up to 6 characters from {a, space, tab, quote, backslash} (19531 of them).
TEST(NodeCommandLine, EveryShortStringQuotesBackUnchanged) {
  const std::string alphabet = "a \t\"\\";
  std::vector<std::string> strings = {""};
  for (std::size_t length = 0; length < 6; ++length) {
    const std::size_t from = strings.size() - static_cast<std::size_t>(std::pow(5, length));
    const std::size_t to = strings.size();
    for (std::size_t i = from; i < to; ++i) {
      for (const char c : alphabet) strings.push_back(strings[i] + c);
    }
  }
  ASSERT_EQ(strings.size(), 19531u);
  for (const std::string& text : strings) {
    const std::vector<Word> words = SplitCommandLine("p " + QuoteArgument(text) + " z");
    ASSERT_EQ(words.size(), 3u) << text;
    ASSERT_EQ(words[1].text, text);
  }
}

TEST(NodeCommandLine, SplitWordFindsWhereAPrefixEnds) {
  const std::string line = R"(p --config="C:\a b" "--x=C:\c d" --y=plain)";
  const std::vector<Word> words = SplitCommandLine(line);
  ASSERT_EQ(words.size(), 4u);
  const WordPoint config = SplitWord(line, words[1], 9);
  EXPECT_EQ(line.substr(words[1].begin, config.offset - words[1].begin), "--config=");
  EXPECT_FALSE(config.in_quotes);
  const WordPoint x = SplitWord(line, words[2], 4);
  EXPECT_EQ(line.substr(words[2].begin, x.offset - words[2].begin), R"("--x=)");
  EXPECT_TRUE(x.in_quotes);
  const WordPoint y = SplitWord(line, words[3], 4);
  EXPECT_EQ(line.substr(y.offset), "plain");
}

TEST(NodeCommandLine, EndsInsideQuotes) {
  EXPECT_FALSE(EndsInsideQuotes(R"("C:\k\kubelet.exe" --a="b c")"));
  EXPECT_TRUE(EndsInsideQuotes(R"("C:\k\kubelet.exe" --a="b c)"));
  EXPECT_TRUE(EndsInsideQuotes(R"("C:\k\kubelet.exe)"));
  EXPECT_TRUE(EndsInsideQuotes(R"(k.exe "a""b)"));
  EXPECT_FALSE(EndsInsideQuotes(R"(k.exe a\")"));
}

// Fuzzing (tests/fuzz/command_line_fuzz.cpp): NSSM's AppParameters hold arguments only; their
// first word is read by the C runtime's rules, not by the program rule.
TEST(NodeCommandLine, SplitArgumentsReadsTheFirstWordAsAnArgument) {
  const std::string params = R"(--config="C:\k dir\config.yaml" --v=2)";
  std::vector<std::string> texts;
  for (const Word& word : SplitArguments(params)) texts.push_back(word.text);
  EXPECT_EQ(texts, (Args{R"(--config=C:\k dir\config.yaml)", "--v=2"}));
  EXPECT_FALSE(ArgumentsEndInsideQuotes(params));
  EXPECT_TRUE(ArgumentsEndInsideQuotes(R"(--config="C:\k dir)"));
}

}  // namespace
}  // namespace dxshim::install
