#include "shim/doctor/kubelet_check.h"

#include <algorithm>
#include <cctype>

#include "shim/doctor/endpoint_identity.h"

namespace dxshim::doctor {
Check CheckKubelet(const KubeletSearch& search, const std::string& listen) {
  std::string elsewhere;
  std::string here;
  for (const auto& k : search.seen) {
    const std::string line = k.who + " uses " + k.endpoint + " (" + k.where + ")";
    if (SameEndpoint(k.endpoint, listen)) {
      here += (here.empty() ? "" : "; ") + line;
    } else {
      elsewhere += (elsewhere.empty() ? "" : "; ") + line;
    }
  }
  std::string unread;
  for (const auto& p : search.problems) unread += (unread.empty() ? "" : "; ") + p;
  // A kubelet that bypasses dxshim fails the check, whatever else could not be read.
  if (!elsewhere.empty()) {
    return Failed("kubelet",
                  elsewhere + ", not dxshim's " + listen + (unread.empty() ? "" : "; " + unread),
                  "point kubelet at " + listen +
                      " (Windows: dxshim install; Linux: --container-runtime-endpoint or "
                      "containerRuntimeEndpoint, docs/linux.md) and restart it; until then "
                      "kubelet bypasses dxshim and pods get no GPU");
  }
  if (!unread.empty()) {
    return Warning("kubelet", (here.empty() ? "" : here + "; ") + unread,
                   "run doctor elevated (Administrator) or as root, which can read kubelet's "
                   "command line and files; if it is, kubelet cannot have started with that "
                   "file either");
  }
  if (search.seen.empty()) {
    return Warning("kubelet", "no kubelet found on this node",
                   "start kubelet with --container-runtime-endpoint=" + listen +
                       " (or containerRuntimeEndpoint in its --config file)");
  }
  return Ok("kubelet", here);
}

}  // namespace dxshim::doctor
