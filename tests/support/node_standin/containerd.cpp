// containerd.exe: serves gRPC on its gRPC address and TTRPC on its TTRPC address, as containerd
// chooses them for its config version (containerd_config.h), each client's process id logged.
#include <windows.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/containerd_config.h"
#include "tests/support/node_standin/containerd_service.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/grpc_server.h"
#include "tests/support/node_standin/pipe_endpoint.h"
#include "tests/support/node_standin/pipe_server.h"
#include "tests/support/node_standin/pipe_stream.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/service_runner.h"
#include "tests/support/node_standin/text.h"
#include "tests/support/node_standin/ttrpc.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

// The pipe an address names: \\.\pipe\NAME with slashes or backslashes, or an npipe:// URL.
std::wstring PipeOfAddress(const std::string& address) {
  std::wstring pipe = Widen(address);
  if (const auto from_url = PipePathOfEndpoint(pipe)) return *from_url;
  for (auto& c : pipe) c = c == L'/' ? L'\\' : c;
  return pipe;
}

}  // namespace

DWORD Containerd(const std::wstring&, const std::function<void()>& ready) {
  LogStart(L"starts.log");
  const std::wstring folder = FolderOf(SelfPath());
  const auto args = SplitCommandLine(GetCommandLineW());
  const auto config_flag = FlagValue(args, {L"--config", L"-config", L"--c", L"-c"});
  const std::wstring config =
      config_flag.value_or(ExpandEnvironment(L"%ProgramFiles%\\containerd\\config.toml"));
  const auto toml = ReadTextFile(config);
  if (!toml && config_flag) {
    std::fprintf(stderr, "containerd stand-in: failed to load TOML from %s\n",
                 Utf8FromWide(config.c_str()).c_str());
    return 1;
  }
  const auto narrow = [](const std::optional<std::wstring>& flag) -> std::optional<std::string> {
    if (!flag) return std::nullopt;
    return Utf8FromWide(flag->c_str());
  };
  std::string error;
  const auto server = ContainerdServer(
      toml, narrow(FlagValue(args, {L"--address", L"-address", L"-a"})),
      narrow(FlagValue(args, {L"--root", L"-root"})), "\\\\.\\pipe\\containerd-containerd",
      Utf8FromWide(ExpandEnvironment(L"%ProgramData%\\containerd\\root").c_str()), error);
  if (!server) {
    std::fprintf(stderr, "containerd stand-in: %s\n", error.c_str());
    return 1;
  }
  const std::wstring grpc_pipe = PipeOfAddress(server->grpc_address);
  const std::wstring ttrpc_pipe = PipeOfAddress(server->ttrpc_address);
  for (const auto& pipe : {grpc_pipe, ttrpc_pipe}) {
    if (PipeServed(pipe)) {
      std::fprintf(stderr, "containerd stand-in: %s is served already\n",
                   Utf8FromWide(pipe.c_str()).c_str());
      return 4;
    }
  }
  const HANDLE grpc_first = CreatePipeInstance(grpc_pipe, true);
  const HANDLE ttrpc_first = CreatePipeInstance(ttrpc_pipe, true);
  if (grpc_first == INVALID_HANDLE_VALUE || ttrpc_first == INVALID_HANDLE_VALUE) {
    std::fprintf(stderr, "containerd stand-in: cannot create %s or %s (error %lu)\n",
                 Utf8FromWide(grpc_pipe.c_str()).c_str(), Utf8FromWide(ttrpc_pipe.c_str()).c_str(),
                 GetLastError());
    return 4;
  }
  // Shared with the connections' threads, which may outlive this function by a moment.
  const auto service = std::make_shared<ContainerdService>(
      folder, Widen(server->root), server->grpc_address, server->ttrpc_address);
  service->Load();
  const std::wstring connections_log = folder + L"\\connections.log";
  std::thread grpc(
      ServePipe, grpc_pipe, grpc_first, [service, connections_log](HANDLE pipe, ULONG client) {
        AppendLine(connections_log, "connect " + std::to_string(client));
        PipeStream stream(pipe);
        std::string why;
        ServeGrpc(
            stream, [&](const GrpcRequest& request) { return service->Call(request, client); },
            why);
      });
  std::thread ttrpc(ServePipe, ttrpc_pipe, ttrpc_first, [service](HANDLE pipe, ULONG) {
    PipeStream stream(pipe);
    std::string why;
    ServeTtrpc(
        stream,
        [&](const TtrpcRequest& request, std::string& payload) {
          return service->Event(request, payload);
        },
        why);
  });
  ready();
  grpc.join();  // until g_stop
  ttrpc.join();
  return 0;
}

}  // namespace dxshim::test::node_standin
