// kubelet's flags where its launcher keeps them: in a command line (a service's ImagePath, split
// by command_line.h) and in kubeadm's kubeadm-flags.env. Reads a flag the way kubelet's flag
// parser (spf13/pflag) would, and sets or removes one by replacing only the bytes of its value.
//
// pflag's rules, as kubelet uses them: `--name=value` and `--name value` are both accepted; the
// last occurrence wins; a bool flag may be `--name` alone; a bare `--` ends the flags; only `--`
// starts a long flag (`-x` is a shorthand); `_` and `-` in a name are the same (kubelet's
// WordSepNormalizeFunc).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shim/install/edit/command_line.h"

namespace dxshim::install {

// One occurrence of a flag (FindFlag: the last one).
struct FlagValue {
  std::string value;      // "true" for a bare `--name`
  std::size_t word = 0;   // the index of the `--name...` word
  bool separate = false;  // `--name value`: the value is words[word + 1]
  bool bare = false;      // `--name` alone (no `=` and no value word after it)
};

// The flag `name` (without dashes) among words[first...]; nullopt if absent. `--name` followed by
// a word that does not start with `-` takes that word as its value (kubelet's flags that matter
// here all take values); followed by a flag, by `--` or by nothing, it is a bare bool flag.
std::optional<FlagValue> FindFlag(const std::vector<Word>& words, std::string_view name,
                                  std::size_t first = 0);

// Every occurrence, in order.
std::vector<FlagValue> FindFlagOccurrences(const std::vector<Word>& words, std::string_view name,
                                           std::size_t first = 0);

// `line` with flag `name` set to `value`: every occurrence's value replaced in place (quoted with
// QuoteArgument when needed, and kept quoted when it was; a `--name value` pair keeps its form
// unless the value starts with `-`, which pflag would read as a flag: then `--name=value`; a
// bare `--name` becomes `--name=value`), bytes outside the replaced value spans unchanged; when
// absent, " --name=value" appended (the value quoted as needed; "--name=value " inserted before a
// `--` that ends the flags, if there is one). `first` = index of the first word
// that is a flag (words before it are the program and e.g. a service host's own arguments); 0: the
// line holds arguments only, with no program (NSSM's AppParameters), split by SplitArguments.
// Throws EditError when the line ends inside an open quote and the flag is absent (an appended flag
// would join the last word) or when the line has fewer than `first` words.
std::string SetFlag(std::string_view line, std::string_view name, std::string_view value,
                    std::size_t first = 0);

// `line` without any occurrence of the flag (each with the blanks before it; a `--name value`
// pair goes whole). The line unchanged when the flag is absent. `first` as for SetFlag.
std::string RemoveFlag(std::string_view line, std::string_view name, std::size_t first = 0);

// The index of the word after the one that names kubelet.exe (either slash, any case): where
// kubelet's flags start on a service's command line; nullopt when no word names it.
std::optional<std::size_t> KubeletFlagsStart(const std::vector<Word>& words);

// kubeadm's flags file: kubeadm writes one line `KUBELET_KUBEADM_ARGS="--a=b --c=d"` (kubernetes
// cmd/kubeadm/app/phases/kubelet/flags.go); on Windows sig-windows-tools' StartKubelet.ps1 reads
// it and passes the text between the quotes to kubelet as it is. The flags inside the quotes are
// split on spaces only (no quoting inside).
struct KubeadmFlags {
  std::string args;       // the text between the quotes
  std::size_t begin = 0;  // its span in the file
  std::size_t end = 0;
};

// nullopt when there is no KUBELET_KUBEADM_ARGS line; throws EditError when the line is there but
// its value is not one double-quoted string on that line, or when the variable is set twice.
std::optional<KubeadmFlags> ReadKubeadmFlags(std::string_view file);

// The words of KubeadmFlags::args, split on spaces and tabs (spans relative to `args`): the one
// split of them, where kubelet's launch is read, planned and put back. The args hold no quote
// (ReadKubeadmFlags refuses one), so the start script's command line splits them the same way.
std::vector<Word> SplitKubeadmArgs(std::string_view args);

// The file with the flag set inside KUBELET_KUBEADM_ARGS (only that span changes: every
// occurrence's value replaced as SetFlag does, or ` --name=value` appended to the flags, or
// `--name=value ` inserted before a `--` that ends them). Throws EditError when
// value contains whitespace, a quote or a backslash (the file format cannot carry them: kubeadm
// writes the line Go-quoted, StartKubelet.ps1 reads it raw), or there is no such line.
std::string SetKubeadmFlag(std::string_view file, std::string_view name, std::string_view value);

}  // namespace dxshim::install
