// The node stand-in's roles: one entry point each, chosen by main.cpp from the executable's name.
#pragma once

#include <windows.h>

#include <functional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin {

// The work of each role as service_runner.h's Work (SERVICE_NAME: the name the SCM started it
// as, "" in the foreground; READY: called once it serves), returning its exit code.

// kubelet.exe (kubelet.cpp).
DWORD Kubelet(const std::wstring& service_name, const std::function<void()>& ready);
// nssm.exe (nssm.cpp): a service only.
DWORD Nssm(const std::wstring& service_name, const std::function<void()>& ready);
// containerd.exe (containerd.cpp).
DWORD Containerd(const std::wstring& service_name, const std::function<void()>& ready);
// rke2.exe (rke2.cpp).
DWORD Rke2(const std::wstring& service_name, const std::function<void()>& ready);
// EKS-WindowsServiceHost.exe (service_host.cpp): `EKS-WindowsServiceHost.exe SERVICE PROGRAM
// ARGS...` runs the rest of its own command line, verbatim from PROGRAM on, as its child.
DWORD ServiceHost(const std::wstring& service_name, const std::function<void()>& ready);

// containerd-shim-runhcs-v1.exe (shim.cpp): started by containerd.exe for a task.
DWORD Shim(const std::wstring& service_name, const std::function<void()>& ready);
// kube-log-runner.exe (kube_log_runner.cpp): runs the rest of its command line as its child.
DWORD KubeLogRunner(const std::wstring& service_name, const std::function<void()>& ready);
// kube-proxy.exe (kube_proxy.cpp).
DWORD KubeProxy(const std::wstring& service_name, const std::function<void()>& ready);
// ctr.exe (ctr.cpp): a command line tool, its exit code.
int Ctr();
// powershell.exe and pwsh.exe (powershell.cpp): runs the script or command of ARGS (its own
// command line, split) with the stand-in's PowerShell interpreter; its exit code.
int PowerShell(const std::vector<std::wstring>& args);

// `--probe-pipe NAME` under any name (probe.cpp): 0 if the pipe is served, else 1.
int ProbePipe(const std::wstring& name);
// `--task ID` under any name (task.cpp): a container's process; never returns.
int RunTask();

}  // namespace dxshim::test::node_standin
