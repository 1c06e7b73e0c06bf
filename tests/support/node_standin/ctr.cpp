// ctr.exe: containerd's CLI, as far as the tests use it: `ctr [--address A] [-n NS] c ls -q`,
// `tasks kill ID`, `c rm ID...`, `run --detach IMAGE ID`, each made of the containerd API calls
// real ctr makes for them (containerd v1.7.20 cmd/ctr/commands/...), over gRPC on the pipe.
#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/containerd_messages.h"
#include "tests/support/node_standin/grpc_client.h"
#include "tests/support/node_standin/pipe_endpoint.h"
#include "tests/support/node_standin/pipe_stream.h"
#include "tests/support/node_standin/roles.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

// What the tests see of ctr's failures: `ctr: MESSAGE` and exit code 1 (cmd/ctr/main.go).
int Fail(const std::string& message) {
  std::fprintf(stderr, "ctr: %s\n", message.c_str());
  return 1;
}

class ContainerdClient {
 public:
  ContainerdClient(std::wstring pipe, std::string ns)
      : pipe_(std::move(pipe)), ns_(std::move(ns)) {}

  // Dials as containerd's client does: a pipe that does not exist yet is retried for the
  // client's default 10 s timeout (client.go: copts.timeout 10 s; pkg/dialer).
  bool Connect(std::string& error) {
    DWORD code = 0;
    const HANDLE handle = DialPipe(pipe_, 10000, true, code);
    if (handle == INVALID_HANDLE_VALUE) {
      error = "failed to dial \"" + Utf8FromWide(pipe_.c_str()) + "\": " +
              (code == ERROR_FILE_NOT_FOUND ? std::string("context deadline exceeded")
                                            : "error " + std::to_string(code));
      return false;
    }
    stream_ = std::make_unique<PipeStream>(handle, 30000);
    client_ = std::make_unique<GrpcClient>(*stream_, "localhost");
    return client_->Start(error);
  }

  // One call with the namespace in its metadata (namespaces/grpc.go); false with ERROR on a
  // failed call, its status message as ctr prints it.
  bool Call(const char* method, const std::string& request, std::string& response,
            std::string& error) {
    GrpcResponse reply;
    if (!client_->Call(method, {{kNamespaceHeader, ns_}}, request, reply, error)) return false;
    if (reply.status != kGrpcOk) {
      error = reply.status_message;
      last_status_ = reply.status;
      return false;
    }
    response = std::move(reply.message);
    return true;
  }
  int last_status() const { return last_status_; }

 private:
  std::wstring pipe_;
  std::string ns_;
  std::unique_ptr<PipeStream> stream_;
  std::unique_ptr<GrpcClient> client_;
  int last_status_ = kGrpcOk;
};

// Signal names ctr accepts for `tasks kill --signal` (Windows: the syscall package's numbers).
int SignalNumber(const std::string& name) {
  if (name == "SIGKILL" || name == "KILL") return 9;
  if (name == "SIGTERM" || name == "TERM") return 15;
  if (name == "SIGINT" || name == "INT") return 2;
  return std::atoi(name.c_str());
}

bool IsAny(const std::string& word, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (word == name) return true;
  return false;
}

}  // namespace

int Ctr() {
  const auto wide = SplitCommandLine(GetCommandLineW());
  std::vector<std::string> args;
  for (std::size_t i = 1; i < wide.size(); ++i) args.push_back(Utf8FromWide(wide[i].c_str()));
  // Global flags (cmd/ctr/app/main.go): --address/-a (CONTAINERD_ADDRESS, default
  // defaults.DefaultAddress), --namespace/-n (CONTAINERD_NAMESPACE, default "default").
  const auto env = [](const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return std::string(value && *value ? value : fallback);
  };
  std::string address = env("CONTAINERD_ADDRESS", "\\\\.\\pipe\\containerd-containerd");
  std::string ns = env("CONTAINERD_NAMESPACE", "default");
  std::size_t at = 0;
  for (; at < args.size() && args[at].rfind("-", 0) == 0; ++at) {
    std::string flag = args[at];
    std::string value;
    const auto equals = flag.find('=');
    if (equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag.resize(equals);
    }
    const bool takes_value =
        IsAny(flag, {"--address", "-a", "--namespace", "-n", "--timeout", "--connect-timeout"});
    if (takes_value && equals == std::string::npos) {
      if (++at >= args.size()) return Fail("flag needs an argument: " + flag);
      value = args[at];
    }
    if (IsAny(flag, {"--address", "-a"}))
      address = value;
    else if (IsAny(flag, {"--namespace", "-n"}))
      ns = value;
    else if (!takes_value && !IsAny(flag, {"--debug"}))
      return Fail("flag provided but not defined: " + flag);
  }
  if (at + 1 > args.size()) return Fail("no command (c ls, tasks kill, c rm, run --detach)");
  const std::string command = args[at++];
  const std::string sub = at < args.size() ? args[at] : "";
  std::wstring pipe = Widen(address);
  if (const auto from_url = PipePathOfEndpoint(pipe)) pipe = *from_url;
  for (auto& c : pipe) c = c == L'/' ? L'\\' : c;
  ContainerdClient containerd(pipe, ns);
  std::string error;
  std::string response;

  if (IsAny(command, {"containers", "container", "c"}) && IsAny(sub, {"list", "ls"})) {
    bool quiet = false;
    for (std::size_t i = at + 1; i < args.size(); ++i)
      quiet = quiet || IsAny(args[i], {"-q", "--quiet"});
    if (!containerd.Connect(error) || !containerd.Call(kContainersList, "", response, error))
      return Fail(error);
    const auto list = DecodeContainerList(response);
    if (!list) return Fail("a malformed ListContainersResponse");
    if (!quiet) std::printf("CONTAINER    IMAGE    RUNTIME    \n");
    for (const auto& c : *list) {
      if (quiet)
        std::printf("%s\n", c.id.c_str());
      else
        std::printf("%s    %s    %s    \n", c.id.c_str(), c.image.empty() ? "-" : c.image.c_str(),
                    c.runtime.c_str());
    }
    return 0;
  }
  if (IsAny(command, {"containers", "container", "c"}) &&
      IsAny(sub, {"delete", "del", "remove", "rm"})) {
    // containers.go deleteContainer: the task deleted first (refused while it runs), then the
    // container.
    if (at + 1 >= args.size()) return Fail("must specify at least one container to delete");
    if (!containerd.Connect(error)) return Fail(error);
    int code = 0;
    for (std::size_t i = at + 1; i < args.size(); ++i) {
      const std::string& id = args[i];
      if (!containerd.Call(kTasksDelete, FieldOne(id), response, error) &&
          containerd.last_status() != kGrpcNotFound) {
        code = Fail(containerd.last_status() == kGrpcFailedPrecondition
                        ? "cannot delete a non stopped container: " + error
                        : error);
        continue;
      }
      if (!containerd.Call(kContainersDelete, FieldOne(id), response, error)) code = Fail(error);
    }
    return code;
  }
  if (IsAny(command, {"tasks", "task", "t"}) && sub == "kill") {
    int signal = 15;  // kill.go: SIGTERM unless --signal
    std::string id;
    for (std::size_t i = at + 1; i < args.size(); ++i) {
      if (IsAny(args[i], {"--signal", "-s"}) && i + 1 < args.size())
        signal = SignalNumber(args[++i]);
      else if (args[i].rfind("--signal=", 0) == 0)
        signal = SignalNumber(args[i].substr(9));
      else if (args[i].rfind("-", 0) != 0)
        id = args[i];
    }
    if (id.empty()) return Fail("container id must be provided");
    if (!containerd.Connect(error) ||
        !containerd.Call(kTasksKill, EncodeKill(id, static_cast<std::uint32_t>(signal)), response,
                         error))
      return Fail(error);
    return 0;
  }
  if (command == "run") {
    // run.go with --detach: the container created, then its task created and started.
    bool detach = false;
    std::vector<std::string> words;
    for (std::size_t i = at; i < args.size(); ++i) {
      if (IsAny(args[i], {"--detach", "-d"}))
        detach = true;
      else if (args[i].rfind("-", 0) == 0 && words.size() < 2)
        return Fail("flag not played: " + args[i]);
      else
        words.push_back(args[i]);
    }
    if (words.size() < 2) return Fail("image ref and container id must be provided");
    if (!detach) return Fail("the stand-in plays `run --detach IMAGE ID` only");
    const std::string& image = words[0];
    const std::string& id = words[1];
    if (!containerd.Connect(error) ||
        !containerd.Call(kContainersCreate,
                         FieldOne(EncodeContainer({id, image, "io.containerd.runhcs.v1"})),
                         response, error) ||
        !containerd.Call(kTasksCreate, FieldOne(id), response, error) ||
        !containerd.Call(kTasksStart, FieldOne(id), response, error))
      return Fail(error);
    return 0;
  }
  return Fail("command not played by the stand-in: " + command + " " + sub);
}

}  // namespace dxshim::test::node_standin
