// kube-proxy.exe: nothing of kube-proxy is played; it logs its start and runs until stopped (the
// nodes' kube-proxy services exist beside kubelet's, and must survive what the installer does).
#include <windows.h>

#include <functional>
#include <string>

#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/service_runner.h"

namespace dxshim::test::node_standin {

DWORD KubeProxy(const std::wstring&, const std::function<void()>& ready) {
  LogStart(L"kube-proxy-starts.log");
  ready();
  WaitForSingleObject(g_stop, INFINITE);
  return 0;
}

}  // namespace dxshim::test::node_standin
