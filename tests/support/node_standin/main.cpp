// TEST STAND-INS (mocks) for the programs that launch and serve kubelet on a Windows node. None of
// them can exist under wine here (no kubelet, no NSSM, no PowerShell: wine's powershell.exe is an
// empty stub, no containerd for Windows, no rke2, no EKS service host), so this one program
// behaves like each of them as far as `dxshim.exe install` can observe: the service control
// manager's states, the processes and their command lines, kubelet's healthz port, the named pipes
// and who connects to them. It is NOT any of those programs; it implements nothing of kubelet,
// NSSM, containerd, rke2 or EKS's service host beyond what is described here.
//
// What it is follows from its own file name (the tests copy it under each name):
//   kubelet.exe     appends `start <pid> <command line>` to starts.log next to the executable;
//                   serves HTTP on --healthz-bind-address (127.0.0.1) : --healthz-port (10248;
//                   0 serves none): `GET /healthz` answers 200 `ok`, anything else 404; opens
//                   the pipe of --container-runtime-endpoint (npipe://./pipe/NAME or
//                   npipe:////./pipe/NAME; tcp://HOST:PORT connects) as a client every second and
//                   closes it again, as kubelet's CRI client reconnecting would. Ready once the
//                   port listens; a port it cannot bind ends it with exit code 3 (1: a flag value
//                   it cannot use). Every other flag (--config=PATH too) is accepted and ignored.
//   nssm.exe        a service only, as NSSM 2.24 (its ImagePath is nssm.exe alone): at every start
//                   reads HKLM\SYSTEM\CurrentControlSet\Services\<its service name>\Parameters
//                   (Application, AppParameters, AppDirectory; REG_EXPAND_SZ expanded) and starts
//                   `"<Application>" <AppParameters>` in AppDirectory (if empty: Application's
//                   folder), as NSSM 2.24's start_service does: a PowerShell Application is the
//                   powershell.exe stand-in below when the test put it there. Appends
//                   `start <child pid> <child command line>` to nssm-starts.log next to nssm.exe
//                   (`error <why>` when it cannot start one: service-specific exit code 2), is
//                   RUNNING once the child runs; STOP terminates the child; a child that ends by
//                   itself ends the service with the child's exit code as its service-specific
//                   exit code (real NSSM would restart it: its default AppExit action). Either way
//                   the child's descendants are then killed, as NSSM 2.24's kill_process_tree does
//                   (a kubelet.exe started by a PowerShell script ends with the service).
//   powershell.exe, pwsh.exe
//                   Windows PowerShell 5.1's command line (-File SCRIPT ARGS, -Command TEXT or
//                   the text itself; -ExecutionPolicy, -NoProfile and the like accepted) run by
//                   an interpreter of the subset of PowerShell the kubelet scripts of kubeadm
//                   and AKS use (powershell_interpreter.h): external programs through
//                   CreateProcess with PowerShell's argument rules, the service cmdlets through
//                   the service control manager; stubs for the Host Networking Service's
//                   commands (powershell_stub_cmdlets.cpp). What it does not implement stops the
//                   script with exit code 70 and `not-implemented <pid> <script>:<line>: <what>`
//                   in powershell.log next to the executable, which also gets `start <pid>
//                   <command line>` and `exit <pid> <code>` lines.
//   containerd.exe  appends `start <pid> <command line>` to starts.log next to the executable;
//                   serves the pipe named by the `address` of the top-level [grpc] table of
//                   --config PATH (default %ProgramFiles%\containerd\config.toml; an unreadable
//                   --config file is exit code 1, a missing default one means the default
//                   pipe \\.\pipe\containerd-containerd): always one instance listening, each
//                   client accepted, its process id appended as `connect <pid>` to
//                   connections.log next to the executable, then disconnected. Ready once the
//                   first instance exists; a pipe name another process serves is exit code 4.
//   rke2.exe        as the rke2 service runs kubelet and containerd: at every start reads the
//                   `kubelet-arg` items of --config PATH (-c; default
//                   %SystemDrive%\etc\rancher\rke2\config.yaml; absent: no items) with a small
//                   line reader (KubeletArgItems: a block list, a flow list or one string) and
//                   starts two children from its own folder: `containerd.exe --config
//                   <folder>\containerd.toml` (without --config when that file is absent: the
//                   default pipe) and `kubelet.exe --container-runtime-endpoint=
//                   npipe:////./pipe/containerd-containerd --name=value...`, one --name=value per
//                   item, an item naming a default replacing it (k3s GetArgs). Appends
//                   `start <kubelet's pid> <kubelet's command line>` to rke2-starts.log next to
//                   rke2.exe (`error <why>` when a child cannot start, service-specific exit code
//                   2, or ends by itself: then the other is ended and its exit code is the
//                   service's), is RUNNING once both run; STOP ends both and waits for them.
//   EKS-WindowsServiceHost.exe
//                   as EKS's service host: its command line is `EKS-WindowsServiceHost.exe
//                   <service> <program> <args...>`; starts the rest of that line, verbatim from
//                   <program> on, as its child, appends `start <pid> <child command line>` to
//                   servicehost-starts.log next to itself, is RUNNING once the child runs; STOP
//                   ends the child; a child that ends by itself ends the service with its exit
//                   code (no program: `error <why>`, exit code 2).
//   any name        `--probe-pipe NAME` (NAME: a pipe name, \\.\pipe\NAME or an npipe:// URL)
//                   opens the pipe as a client: exit code 0 and `served by process <pid>` if it
//                   could, 1 if not.
//
// Started by the service control manager (its parent is services.exe) it runs as a
// SERVICE_WIN32_OWN_PROCESS service: START_PENDING, RUNNING once ready, STOP_PENDING and STOPPED
// on STOP or SHUTDOWN, a non-zero exit code as the service-specific one. Started any other way (a
// console, or as another program's child, such as NSSM's) it runs in the foreground until killed
// or Ctrl-C. A child is never offered to the service dispatcher: under wine the dispatcher would
// connect to the control pipe of the service started last (another process's) instead of failing.
// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on

#include <cstdio>
#include <string>

#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/service_runner.h"
#include "tests/support/node_standin/text.h"

using dxshim::test::node_standin::Containerd;
using dxshim::test::node_standin::EndsWithNoCase;
using dxshim::test::node_standin::FileNameOf;
using dxshim::test::node_standin::Kubelet;
using dxshim::test::node_standin::Lower;
using dxshim::test::node_standin::Nssm;
using dxshim::test::node_standin::PowerShell;
using dxshim::test::node_standin::ProbePipe;
using dxshim::test::node_standin::Rke2;
using dxshim::test::node_standin::Run;
using dxshim::test::node_standin::SelfPath;
using dxshim::test::node_standin::ServiceHost;
using dxshim::test::node_standin::SplitCommandLine;

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const auto args = SplitCommandLine(GetCommandLineW());
  if (args.size() >= 2 && args[1] == L"--probe-pipe") {
    if (args.size() != 3) {
      std::fprintf(stderr, "usage: node-standin.exe --probe-pipe NAME\n");
      return 2;
    }
    return ProbePipe(args[2]);
  }
  WSADATA winsock{};
  WSAStartup(MAKEWORD(2, 2), &winsock);
  std::wstring role = Lower(FileNameOf(SelfPath()));
  if (EndsWithNoCase(role, L".exe")) role.resize(role.size() - 4);
  if (role == L"kubelet") return Run("kubelet", Kubelet, false);
  if (role == L"nssm") return Run("nssm", Nssm, true);
  if (role == L"containerd") return Run("containerd", Containerd, false);
  if (role == L"rke2") return Run("rke2", Rke2, false);
  if (role == L"eks-windowsservicehost") return Run("EKS-WindowsServiceHost", ServiceHost, false);
  if (role == L"powershell" || role == L"pwsh") return PowerShell(args);
  std::fprintf(stderr,
               "node-standin.exe: a test stand-in; copy it as kubelet.exe, nssm.exe, "
               "containerd.exe, rke2.exe, EKS-WindowsServiceHost.exe or powershell.exe (see "
               "tests/support/node_standin/main.cpp), or run it with --probe-pipe NAME\n");
  return 2;
}
