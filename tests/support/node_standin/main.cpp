// TEST STAND-INS (mocks) for the programs that launch and serve kubelet on a Windows node. None of
// them can exist under wine here (no kubelet, no NSSM, no PowerShell: wine's powershell.exe is an
// empty stub, no containerd for Windows, no rke2, no EKS service host), so this one program
// behaves like each of them as far as `dxshim.exe install` can observe: the service control
// manager's states, the processes and their command lines, kubelet's healthz port, the named pipes,
// who connects to them and the calls made on them (real gRPC over HTTP/2 and real TTRPC, with
// codecs of its own: it links no gRPC). It is NOT any of those programs; it implements nothing of
// kubelet, NSSM, PowerShell, containerd, its shim, ctr, rke2, kube-log-runner, kube-proxy or EKS's
// service host beyond what is described here.
//
// What it is follows from its own file name (the tests copy it under each name):
//   kubelet.exe     appends `start <pid> <command line>` to starts.log next to the executable;
//                   serves HTTP on --healthz-bind-address (127.0.0.1) : --healthz-port (10248;
//                   0 serves none, as kubelet's healthzPort 0): `GET /healthz` answers 200 `ok`,
//                   anything else 404; calls /runtime.v1.RuntimeService/Version every second on
//                   one gRPC connection to --container-runtime-endpoint (npipe://./pipe/NAME,
//                   npipe:////./pipe/NAME or tcp://HOST:PORT), dialing again with kubelet's gRPC
//                   backoff when it fails (kubelet_runtime.h), each call's outcome appended to
//                   kubelet-calls.log next to the executable (`version <pid> status <code>
//                   <message>` or `version <pid> unavailable <why>`). Ready once the port listens;
//                   a port it cannot bind ends it with exit code 3 (1: a flag value it cannot
//                   use). Without those flags, the endpoint and the port are the top-level
//                   containerRuntimeEndpoint and healthzPort of its --config file, JSON or YAML
//                   (kubelet_config.h; --config-dir drop-ins are not read; a path rooted without
//                   a drive is on the current drive, as on Windows: files.h). Every other flag is
//                   accepted and ignored.
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
//   containerd.exe  `--version`: `containerd github.com/containerd/containerd VERSION COMMIT`, as
//                   containerd's version command prints it, VERSION from containerd-version.txt
//                   next to the executable (v1.7.20 without it). Otherwise it
//                   appends `start <pid> <command line>` to starts.log next to the executable;
//                   reads --config PATH (default %ProgramFiles%\containerd\config.toml; an
//                   unreadable --config file is exit code 1, a missing default one means
//                   containerd's defaults) and serves gRPC on its gRPC address and TTRPC on its
//                   TTRPC address, chosen as containerd does for the file's `version`
//                   (containerd_config.h: versions 1-3 [grpc] and [ttrpc], the TTRPC address the
//                   gRPC one + ".ttrpc" unless set; version 4 the server plugins' tables, TTRPC
//                   at the default pipe + ".ttrpc" unless set; --address, --root), each with one
//                   instance always listening. Each gRPC client's process id is appended as
//                   `connect <pid>` to connections.log next to the executable, and each call as
//                   `call <pid or ?> <method>` to calls.log; every call is answered OK with an
//                   empty message, except the containerd API calls ctr.exe makes
//                   (containers.v1.Containers/List, Create, Delete; tasks.v1.Tasks/Create,
//                   Start, Kill, Delete, in the namespace of the containerd-namespace header),
//                   which act on its container table, kept in
//                   <root>\node-standin-containers.txt (root: --root, the config's `root`,
//                   default %ProgramData%\containerd\root) and reloaded at start, so that
//                   containers and tasks survive its restarts as real ones do. Tasks/Create
//                   starts containerd-shim-runhcs-v1.exe (on PATH, else next to containerd.exe)
//                   with containerd's environment (TTRPC_ADDRESS = its TTRPC address now) and
//                   calls it over TTRPC (containerd.task.v2.Task Create, Start, Kill, Delete,
//                   Shutdown). On TTRPC it takes containerd.services.events.ttrpc.v1.Events/
//                   Forward: `event <topic> <container id>` appended to events.log, a /tasks/exit
//                   of a task's own process marking that task stopped. Ready once both pipes
//                   have an instance; a pipe another process serves is exit code 4, a config
//                   containerd refuses (an empty [grpc] address) exit code 1.
//   containerd-shim-runhcs-v1.exe
//                   the shim of one task, started by containerd.exe as `... --id ID serve
//                   --socket PIPE` (what hcsshim's `start` runs). Appends `start <pid> <command
//                   line>` and `ttrpc-address <id> <TTRPC_ADDRESS>` to shim.log next to itself,
//                   reading TTRPC_ADDRESS once, at start, as hcsshim does; serves
//                   containerd.task.v2.Task on PIPE: Create starts its task (`--task ID`, below)
//                   suspended, Start resumes it, Kill ends it (exit code 1), Delete reports its
//                   exit status, Shutdown ends the shim. When the task ends it publishes
//                   /tasks/exit (TaskExit) to that TTRPC address with containerd's publisher's
//                   retries (event_publisher.h), one shim.log line per attempt (`publish
//                   /tasks/exit <id> attempt <n> to <address>: ok` or `: failed: <why>`) and
//                   `evict /tasks/exit <id> after 6 attempts` when it gives up.
//   ctr.exe         `ctr [--address A|-a A] [--namespace NS|-n NS] c ls [-q]`, `tasks kill
//                   [--signal S] ID`, `c rm ID...` and `run --detach IMAGE ID` as containerd API
//                   calls over gRPC (ctr.cpp): address default \\.\pipe\containerd-containerd
//                   (CONTAINERD_ADDRESS), namespace default "default" (CONTAINERD_NAMESPACE); a
//                   failure prints `ctr: <message>` and exits 1.
//   rke2.exe        as the rke2 service runs kubelet and containerd: at every start reads --config
//                   PATH (-c; default /etc/rancher/rke2/config.yaml; a rooted path is on the
//                   current directory's drive, as on Windows; absent: none)
//                   and the *.yaml and *.yml drop-ins of PATH.d in name order, merged as k3s
//                   pkg/configfilearg does (a plain key replaces what earlier files set, `key+`
//                   appends), with a small line reader (ListItems: a block list, a flow list or one
//                   string), and starts two children from its own folder: `containerd.exe --config
//                   <folder>\containerd.toml` (without --config when that file is absent: the
//                   default pipe) and `kubelet.exe` with the arguments k3s's GetArgs makes of
//                   rke2's own and the kubelet-arg items (rke2's own:
//                   --container-runtime-endpoint=npipe:////./pipe/containerd-containerd,
//                   --node-labels= the node-label items joined; of the kubelet-arg items, a plain
//                   item replaces rke2's value, `name+=` comes after it, `name-=` before; names
//                   sorted). Appends `start <kubelet's pid> <kubelet's command line>` to
//                   rke2-starts.log next to rke2.exe (`error <why>` when a child cannot start,
//                   service-specific exit code 2, or ends by itself: then the other is ended and
//                   its exit code is the service's), is RUNNING once both run; STOP ends both and
//                   waits for them.
//   EKS-WindowsServiceHost.exe
//                   as EKS's service host: its command line is `EKS-WindowsServiceHost.exe
//                   <service> <program> <args...>`; starts the rest of that line, verbatim from
//                   <program> on, as its child, appends `start <pid> <child command line>` to
//                   servicehost-starts.log next to itself, is RUNNING once the child runs; STOP
//                   ends the child; a child that ends by itself ends the service with its exit
//                   code (no program: `error <why>`, exit code 2).
//   kube-log-runner.exe
//                   as kubernetes' log runner: its own flags parsed as Go's flag package does
//                   (-log-file, -also-stdout, -redirect-stderr, -flush-interval, -log-file-size,
//                   -log-file-age; one or two dashes; up to the first word that is no flag), the
//                   rest run as its child with the command line Go's os/exec makes of it, its
//                   standard output and error appended to -log-file (the file's folder must
//                   exist; a path rooted without a drive is on the current drive). Appends
//                   `start <pid> <child command line>` to kube-log-runner-starts.log next to
//                   itself, is RUNNING once the child runs;
//                   STOP ends the child; a child that exits with a code other than 0 ends it with
//                   exit code 1 (log.Fatal), 0 with 0. A flag error is exit code 2, no command
//                   exit code 1 (`error <why>` in the log).
//   kube-proxy.exe  appends `start <pid> <command line>` to kube-proxy-starts.log next to itself
//                   and runs until stopped.
//   any name        `--probe-pipe NAME` (NAME: a pipe name, \\.\pipe\NAME or an npipe:// URL)
//                   opens the pipe as a client: exit code 0 and `served by process <pid>` if it
//                   could, 1 if not. `--task ID`: a container's task, as the shim starts it; it
//                   waits until it is ended.
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

#include <cctype>
#include <cstdio>
#include <string>

#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/service_runner.h"
#include "tests/support/node_standin/text.h"

using dxshim::test::node_standin::Containerd;
using dxshim::test::node_standin::Ctr;
using dxshim::test::node_standin::EndsWithNoCase;
using dxshim::test::node_standin::FileNameOf;
using dxshim::test::node_standin::FolderOf;
using dxshim::test::node_standin::Kubelet;
using dxshim::test::node_standin::KubeLogRunner;
using dxshim::test::node_standin::KubeProxy;
using dxshim::test::node_standin::Lower;
using dxshim::test::node_standin::Nssm;
using dxshim::test::node_standin::PowerShell;
using dxshim::test::node_standin::ProbePipe;
using dxshim::test::node_standin::ReadTextFile;
using dxshim::test::node_standin::Rke2;
using dxshim::test::node_standin::Run;
using dxshim::test::node_standin::RunTask;
using dxshim::test::node_standin::SelfPath;
using dxshim::test::node_standin::ServiceHost;
using dxshim::test::node_standin::Shim;
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
  if (args.size() >= 2 && args[1] == L"--task") return RunTask();
  WSADATA winsock{};
  WSAStartup(MAKEWORD(2, 2), &winsock);
  std::wstring role = Lower(FileNameOf(SelfPath()));
  if (EndsWithNoCase(role, L".exe")) role.resize(role.size() - 4);
  if (role == L"kubelet") return Run("kubelet", Kubelet, false);
  if (role == L"nssm") return Run("nssm", Nssm, true);
  if (role == L"containerd" && args.size() == 2 && args[1] == L"--version") {
    const auto file = ReadTextFile(FolderOf(SelfPath()) + L"\\containerd-version.txt");
    std::string version = file ? *file : "v1.7.20";
    while (!version.empty() && std::isspace(static_cast<unsigned char>(version.back()))) {
      version.pop_back();
    }
    std::printf("containerd github.com/containerd/containerd %s standin\n", version.c_str());
    return 0;
  }
  if (role == L"containerd") return Run("containerd", Containerd, false);
  if (role == L"rke2") return Run("rke2", Rke2, false);
  if (role == L"eks-windowsservicehost") return Run("EKS-WindowsServiceHost", ServiceHost, false);
  if (role == L"containerd-shim-runhcs-v1") return Run("containerd-shim-runhcs-v1", Shim, false);
  if (role == L"ctr") return Ctr();
  if (role == L"kube-log-runner") return Run("kube-log-runner", KubeLogRunner, false);
  if (role == L"kube-proxy") return Run("kube-proxy", KubeProxy, false);
  if (role == L"powershell" || role == L"pwsh") return PowerShell(args);
  std::fprintf(stderr,
               "node-standin.exe: a test stand-in; copy it as kubelet.exe, nssm.exe, "
               "containerd.exe, rke2.exe, EKS-WindowsServiceHost.exe, "
               "containerd-shim-runhcs-v1.exe, ctr.exe, kube-log-runner.exe, kube-proxy.exe or "
               "powershell.exe (see tests/support/node_standin/main.cpp), or run it with "
               "--probe-pipe NAME\n");
  return 2;
}
