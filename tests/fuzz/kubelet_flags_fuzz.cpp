// libFuzzer target: the installer's edits of kubelet's flags (shim/install/edit/kubelet_flags.h).
// The input is a flag name (first line), a value (second line) and a text (the rest), edited as a
// service command line (flags from word 1, after the program), as NSSM's AppParameters (flags from
// word 0, no program) and as kubeadm-flags.env. Properties:
//   - SetFlag, RemoveFlag and SetKubeadmFlag refuse only with EditError, and only for a name that
//     is no flag name, a value kubeadm-flags.env cannot carry, a file without (or with a bad)
//     KUBELET_KUBEADM_ARGS line, a line with fewer words than the flags' start, or a flag to append
//     to a line that ends inside a quote;
//   - re-read: after SetFlag every occurrence of the flag reads the value (at least one); after
//     RemoveFlag there is none; after SetKubeadmFlag every occurrence in KUBELET_KUBEADM_ARGS reads
//     the value;
//   - idempotence: the same edit of the result changes nothing;
//   - bytes outside the setting: SetFlag of a present flag changes no byte outside the flag's own
//     words (RemoveFlag of the result is RemoveFlag of the input); of an absent flag it appends
//     ` --name=value` or inserts `--name=value ` before a `--` that ends the flags, nothing else;
//     RemoveFlag leaves every other word's text, in order; SetKubeadmFlag changes no byte outside
//     the quotes of KUBELET_KUBEADM_ARGS, and no other word between them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shim/install/edit/kubelet_flags.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace install = dxshim::install;
using dxshim::fuzz::Check;

bool BadName(const std::string& name) {
  return name.empty() || name[0] == '-' || name.find_first_of(" \t\r\n\"'=\\") != std::string::npos;
}

// The words that are not an occurrence of the flag (nor the value word of one).
std::vector<std::string> Others(const std::vector<install::Word>& words, const std::string& name,
                                std::size_t first) {
  std::vector<bool> flag(words.size(), false);
  for (const auto& found : install::FindFlagOccurrences(words, name, first)) {
    flag[found.word] = true;
    if (found.separate) flag[found.word + 1] = true;
  }
  std::vector<std::string> others;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!flag[i]) others.push_back(words[i].text);
  }
  return others;
}

// How SetFlag and RemoveFlag split a line whose flags start at word `first`: with no program
// when that is 0 (NSSM's AppParameters).
std::vector<install::Word> WordsOf(const std::string& line, std::size_t first) {
  return first == 0 ? install::SplitArguments(line) : install::SplitCommandLine(line);
}
bool EndsOpen(const std::string& line, std::size_t first) {
  return first == 0 ? install::ArgumentsEndInsideQuotes(line) : install::EndsInsideQuotes(line);
}

bool AllRead(const std::vector<install::FlagValue>& found, const std::string& value) {
  if (found.empty()) return false;
  for (const auto& flag : found) {
    if (flag.value != value) return false;
  }
  return true;
}

void CheckSetFlag(const std::string& line, const std::string& name, const std::string& value,
                  std::size_t first) {
  const auto words = WordsOf(line, first);
  std::string out;
  try {
    out = install::SetFlag(line, name, value, first);
  } catch (const install::EditError&) {
    const bool absent =
        words.size() < first || install::FindFlagOccurrences(words, name, first).empty();
    Check(BadName(name) || words.size() < first || (absent && EndsOpen(line, first)),
          "SetFlag refuses only what it cannot edit");
    return;
  }
  Check(!BadName(name) && words.size() >= first, "SetFlag accepts only what it can edit");
  const auto after = WordsOf(out, first);
  Check(AllRead(install::FindFlagOccurrences(after, name, first), value),
        "after SetFlag every occurrence reads the value");
  Check(install::SetFlag(out, name, value, first) == out, "SetFlag is idempotent");
  if (!install::FindFlagOccurrences(words, name, first).empty()) {
    Check(install::RemoveFlag(out, name, first) == install::RemoveFlag(line, name, first),
          "SetFlag changes only the flag's words");
    return;
  }
  const std::string flag = "--" + name + "=" + install::QuoteArgument(value);
  std::size_t end_of_flags = first;
  while (end_of_flags < words.size() && words[end_of_flags].text != "--") ++end_of_flags;
  if (end_of_flags < words.size()) {
    const std::size_t at = words[end_of_flags].begin;
    Check(out == line.substr(0, at) + flag + " " + line.substr(at),
          "an absent flag is inserted before `--`");
  } else {
    Check(out == line + " " + flag, "an absent flag is appended");
  }
}

void CheckRemoveFlag(const std::string& line, const std::string& name, std::size_t first) {
  std::string out;
  try {
    out = install::RemoveFlag(line, name, first);
  } catch (const install::EditError&) {
    Check(BadName(name), "RemoveFlag refuses only a bad name");
    return;
  }
  const auto after = WordsOf(out, first);
  Check(install::FindFlagOccurrences(after, name, first).empty(),
        "RemoveFlag leaves no occurrence");
  Check(install::RemoveFlag(out, name, first) == out, "RemoveFlag is idempotent");
  Check(Others(after, name, first) == Others(WordsOf(line, first), name, first),
        "RemoveFlag keeps every other word");
}

void CheckKubeadm(const std::string& file, const std::string& name, const std::string& value) {
  std::optional<install::KubeadmFlags> before;
  bool readable = true;
  try {
    before = install::ReadKubeadmFlags(file);
  } catch (const install::EditError&) {
    readable = false;
  }
  std::string out;
  try {
    out = install::SetKubeadmFlag(file, name, value);
  } catch (const install::EditError&) {
    bool bad_value = false;
    for (const char c : value) {
      const auto u = static_cast<unsigned char>(c);
      bad_value = bad_value || c == '"' || c == '\'' || c == '\\' || u <= ' ' || u == 0x7f;
    }
    Check(BadName(name) || bad_value || !readable || !before,
          "SetKubeadmFlag refuses only what it cannot edit");
    return;
  }
  Check(readable && before, "SetKubeadmFlag edits only a KUBELET_KUBEADM_ARGS line");
  const auto now = install::ReadKubeadmFlags(out);
  Check(now.has_value(), "the edited file has its KUBELET_KUBEADM_ARGS line");
  const auto words = install::SplitKubeadmArgs(now->args);
  Check(AllRead(install::FindFlagOccurrences(words, name, 0), value),
        "after SetKubeadmFlag every occurrence reads the value");
  Check(install::SetKubeadmFlag(out, name, value) == out, "SetKubeadmFlag is idempotent");
  Check(now->begin == before->begin && out.substr(0, now->begin) == file.substr(0, before->begin),
        "SetKubeadmFlag keeps the bytes before the flags");
  Check(out.substr(now->end) == file.substr(before->end),
        "SetKubeadmFlag keeps the bytes after the flags");
  Check(Others(words, name, 0) == Others(install::SplitKubeadmArgs(before->args), name, 0),
        "SetKubeadmFlag keeps every other flag");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = dxshim::fuzz::LeadingLines<2>(data, size);
  if (!input) return 0;
  const auto& [name, value, text] = *input;
  for (const std::size_t first : {0, 1}) {
    CheckSetFlag(text, name, value, first);
    CheckRemoveFlag(text, name, first);
  }
  CheckKubeadm(text, name, value);
  return 0;
}
