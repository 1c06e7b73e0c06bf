#include "shim/install/edit/kubelet_flag_restore.h"

#include "shim/install/edit/kubelet_flags.h"

namespace dxshim::install {
namespace {

// A kubelet flag list inside a value: where its flags start, and how one is set or removed.
struct FlagList {
  std::vector<Word> words;
  std::size_t first = 0;
  bool kubeadm = false;  // inside kubeadm-flags.env's KUBELET_KUBEADM_ARGS
};

std::optional<FlagList> FlagsIn(FlagHolder holder, const std::string& value) {
  switch (holder) {
    case FlagHolder::kKubeadmFlagsFile: {
      const auto flags = ReadKubeadmFlags(value);
      if (!flags) return std::nullopt;
      return FlagList{SplitKubeadmArgs(flags->args), 0, true};
    }
    case FlagHolder::kArguments:
      return FlagList{SplitArguments(value), 0, false};
    case FlagHolder::kServiceCommandLine: {
      FlagList list{SplitCommandLine(value), 0, false};
      const auto first = KubeletFlagsStart(list.words);
      if (!first) return std::nullopt;
      list.first = *first;
      return list;
    }
  }
  return std::nullopt;
}

std::optional<std::string> FlagOf(const FlagList& list, std::string_view name) {
  const auto found = FindFlag(list.words, name, list.first);
  return found ? std::optional(found->value) : std::nullopt;
}

}  // namespace

FlagRestore RestoreFlags(FlagHolder holder, const std::string& before, const std::string& written,
                         const std::string& now, std::span<const std::string_view> names) {
  const auto was_list = FlagsIn(holder, before);
  const auto set_list = FlagsIn(holder, written);
  auto current = FlagsIn(holder, now);
  if (!was_list || !set_list || !current) return {};
  std::string out = now;
  bool set_any = false;
  bool left = false;
  for (const std::string_view name : names) {
    const auto was = FlagOf(*was_list, name);
    const auto set = FlagOf(*set_list, name);
    if (!set || was == set) continue;  // install did not set this one
    set_any = true;
    const auto holds = FlagOf(*current, name);
    left = left || holds;
    if (holds != set) continue;  // gone, or someone set it since: theirs
    if (current->kubeadm) {
      if (!was) return {};
      out = SetKubeadmFlag(out, name, *was);
    } else {
      out = was ? SetFlag(out, name, *was, current->first) : RemoveFlag(out, name, current->first);
    }
    current = FlagsIn(holder, out);
  }
  if (out != now) return {FlagRestore::Kind::kPutBack, out};
  if (set_any && !left) return {FlagRestore::Kind::kNoneLeft, {}};
  return {};
}

}  // namespace dxshim::install
