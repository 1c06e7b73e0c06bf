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

// `now` with each of `names` that install set (its value in `before` differs from the one in
// `written`) put back to its value in `before`, where `now` still holds install's value; nullopt
// when none is put back, or when one cannot be (a flag kubeadm's file did not have: dxshim has no
// way to remove it there).
std::optional<std::string> PutBackFlags(FlagHolder holder, const std::string& before,
                                        const std::string& written, const std::string& now,
                                        std::span<const std::string_view> names);

// Whether `now` has none of the `names` install set any more (a command line made again
// without them): nothing of dxshim's is left in it to put back.
bool HoldsNoFlagSet(FlagHolder holder, const std::string& before, const std::string& written,
                    const std::string& now, std::span<const std::string_view> names);

}  // namespace dxshim::install
