// Putting kubelet flags back: in a value that holds kubelet's flags (kubeadm-flags.env, NSSM's
// AppParameters, a service's command line), the flags install set are given back the values they
// had before install, and nothing else changes. What uninstall and a rollback use when someone
// edited the value since install (undo_plan.cpp decides when).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shim/install/edit/command_line.h"

namespace dxshim::install {

// Where a value keeps kubelet's flags.
enum class FlagHolder {
  kKubeadmFlagsFile,   // KUBELET_KUBEADM_ARGS="..." in kubeadm-flags.env
  kArguments,          // NSSM's AppParameters: arguments only
  kServiceCommandLine  // a service's command line: the flags follow kubelet.exe's word
};

// What putting back the flags install set comes to, in a value edited since install.
struct FlagRestore {
  enum class Kind {
    kPutBack,   // `value`: `now` with each flag install set given its old value back
    kNoneLeft,  // `now` has none of the flags install set any more (a line made again)
    kCannot,    // a flag install set holds another value now, or cannot be put back
  };
  Kind kind = Kind::kCannot;
  std::string value;
};

// Each of `names` that install set (its value in `before` differs from the one in `written`) and
// that `now` still holds with install's value is put back to its value in `before`; every other
// byte of `now` stays. kCannot also when a flag would have to be removed from kubeadm's file
// (dxshim has no way to remove one there), and when no flag is put back but one is left.
FlagRestore RestoreFlags(FlagHolder holder, const std::string& before, const std::string& written,
                         const std::string& now, std::span<const std::string_view> names);

}  // namespace dxshim::install
