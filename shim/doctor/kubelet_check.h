// `dxshim doctor`'s check 4: whether kubelet points at dxshim. Kubelets are found per platform
// (kubelet_search_posix.cpp: the running processes in /proc; kubelet_search_windows.cpp: the
// kubelet service as its launcher starts it, read from the registry and the launcher's files, and
// the running kubelet.exe processes), each with the endpoint it uses and where that is set.
#pragma once

#include <string>
#include <vector>

#include "shim/doctor/doctor_check.h"

namespace dxshim::doctor {

struct KubeletSeen {
  std::string who;       // "kubelet (pid 812)", "the kubelet service (NSSM, kubelet.exe)"
  std::string endpoint;  // the CRI endpoint it uses
  std::string where;     // where that is set: "--container-runtime-endpoint", "... in FILE"
};

struct KubeletSearch {
  std::vector<KubeletSeen> seen;
  std::vector<std::string> problems;  // kubelets whose endpoint could not be read, and why
};

// This node's kubelets.
KubeletSearch FindKubelets();

// ✗ for a kubelet that uses another endpoint than `listen` (naming both); ! when one's endpoint
// cannot be read (doctor not elevated, or a file that is gone) or no kubelet is found.
Check CheckKubelet(const KubeletSearch& search, const std::string& listen);

}  // namespace dxshim::doctor
