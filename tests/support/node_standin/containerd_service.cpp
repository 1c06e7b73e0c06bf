// The containerd stand-in's calls: its gRPC API for ctr.exe's calls, its shims, and the events the
// shims forward (see containerd_service.h).
#include "tests/support/node_standin/containerd_service.h"

// clang-format off
#include <windows.h>
#include <shlobj.h>
// clang-format on

#include <utility>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/containerd_messages.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/pipe_stream.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

constexpr char kRuntime[] = "io.containerd.runhcs.v1";  // defaults/defaults_windows.go
constexpr wchar_t kShimBinary[] = L"containerd-shim-runhcs-v1.exe";

GrpcResponse Status(int code, std::string message) { return {code, std::move(message), ""}; }
GrpcResponse Ok(std::string message = "") { return {kGrpcOk, "", std::move(message)}; }

std::string Quoted(const std::string& id) { return "\"" + id + "\""; }

// This process's environment with NAME=VALUE pairs set (replacing any of the same name), as a
// CreateProcess environment block.
std::wstring EnvironmentWith(const std::vector<std::pair<std::wstring, std::wstring>>& set) {
  std::wstring block;
  wchar_t* strings = GetEnvironmentStringsW();
  for (const wchar_t* entry = strings; entry && *entry; entry += wcslen(entry) + 1) {
    const std::wstring text = entry;
    const std::wstring name = Lower(text.substr(0, text.find(L'=', 1)));
    bool replaced = false;
    for (const auto& [key, value] : set) replaced = replaced || Lower(key) == name;
    if (!replaced) block += text + L'\0';
  }
  if (strings) FreeEnvironmentStringsW(strings);
  for (const auto& [key, value] : set) block += key + L"=" + value + L'\0';
  return block + L'\0';
}

}  // namespace

ContainerdService::ContainerdService(std::wstring folder, std::wstring root,
                                     std::string grpc_address, std::string ttrpc_address)
    : folder_(std::move(folder)),
      root_(std::move(root)),
      grpc_address_(std::move(grpc_address)),
      ttrpc_address_(std::move(ttrpc_address)) {}

void ContainerdService::Load() {
  std::lock_guard lock(mutex_);
  if (const auto text = ReadTextFile(root_ + L"\\node-standin-containers.txt"))
    containers_ = ParseContainers(*text);
}

void ContainerdService::Save() {
  SHCreateDirectoryExW(nullptr, root_.c_str(), nullptr);  // containerd makes its root too
  const std::wstring path = root_ + L"\\node-standin-containers.txt";
  const std::wstring temporary = path + L".new";
  const std::string text = SerializeContainers(containers_);
  const HANDLE file = CreateFileW(temporary.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                                  FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) return;
  DWORD written = 0;
  WriteFile(file, text.data(), static_cast<DWORD>(text.size()), &written, nullptr);
  CloseHandle(file);
  MoveFileExW(temporary.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING);
}

ContainerRecord* ContainerdService::Find(const std::string& ns, const std::string& id) {
  for (auto& container : containers_)
    if (container.ns == ns && container.id == id) return &container;
  return nullptr;
}

GrpcResponse ContainerdService::Call(const GrpcRequest& request, ULONG client_pid) {
  AppendLine(
      folder_ + L"\\calls.log",
      "call " + (client_pid ? std::to_string(client_pid) : std::string("?")) + " " + request.path);
  const bool containers = request.path.rfind("/containerd.services.containers.v1.", 0) == 0;
  const bool tasks = request.path.rfind("/containerd.services.tasks.v1.", 0) == 0;
  if (!containers && !tasks) return Ok();
  const std::string* ns = FindHeader(request.metadata, kNamespaceHeader);
  if (!ns || ns->empty()) {  // namespaces.NamespaceRequired
    return Status(kGrpcFailedPrecondition, "namespace is required: failed precondition");
  }
  return containers ? ContainersCall(request.path, *ns, request.message)
                    : TasksCall(request.path, *ns, request.message);
}

GrpcResponse ContainerdService::ContainersCall(const std::string& method, const std::string& ns,
                                               const std::string& message) {
  std::lock_guard lock(mutex_);
  if (method == kContainersList) {  // filters are not read: every container of the namespace
    std::vector<ContainerMessage> list;
    for (const auto& c : containers_)
      if (c.ns == ns) list.push_back({c.id, c.image, c.runtime});
    return Ok(EncodeContainerList(list));
  }
  if (method == kContainersCreate) {
    const auto field = FieldOneOf(message);
    const auto container = field ? DecodeContainer(*field) : std::nullopt;
    if (!container || container->id.empty())
      return Status(kGrpcInvalidArgument, "container id must not be empty: invalid argument");
    if (Find(ns, container->id))
      return Status(kGrpcAlreadyExists, "container " + Quoted(container->id) + ": already exists");
    ContainerRecord record;
    record.ns = ns;
    record.id = container->id;
    record.image = container->image;
    record.runtime = container->runtime.empty() ? kRuntime : container->runtime;
    containers_.push_back(record);
    Save();
    return Ok(FieldOne(EncodeContainer({record.id, record.image, record.runtime})));
  }
  if (method == kContainersDelete) {
    const std::string id = FieldOneOf(message).value_or("");
    for (auto it = containers_.begin(); it != containers_.end(); ++it) {
      if (it->ns != ns || it->id != id) continue;
      containers_.erase(it);
      Save();
      return Ok();
    }
    return Status(kGrpcNotFound,
                  "container " + Quoted(id) + " in namespace " + Quoted(ns) + ": not found");
  }
  return Ok();  // Get, Update and the rest: not played
}

std::optional<std::string> ContainerdService::StartShim(const std::string& ns,
                                                        const std::string& id, DWORD& shim_pid,
                                                        std::string& why) {
  // runtime/v2/manager.go resolveRuntimePath: the binary on PATH, else next to containerd.
  std::wstring binary(MAX_PATH, L'\0');
  const DWORD found = SearchPathW(nullptr, kShimBinary, nullptr, static_cast<DWORD>(binary.size()),
                                  binary.data(), nullptr);
  binary = found > 0 && found < MAX_PATH ? binary.substr(0, found) : folder_ + L"\\" + kShimBinary;
  // hcsshim cmd/containerd-shim-runhcs-v1/start.go (04e241b1): `start` starts the serving shim
  // on this pipe in a process of its own and exits (runtime/v2/shim.go: containerd waits for it).
  const std::string address =
      "\\\\.\\pipe\\ProtectedPrefix\\Administrators\\containerd-shim-" + ns + "-" + id + "-pipe";
  const std::wstring command = QuoteArgument(binary) + L" --namespace " + QuoteArgument(Widen(ns)) +
                               L" --address " + QuoteArgument(Widen(grpc_address_)) +
                               L" --publish-binary " +
                               QuoteArgument(folder_ + L"\\containerd.exe") + L" --id " +
                               QuoteArgument(Widen(id)) + L" start";
  // runtime/v2/shim/util.go Command (containerd v1.7.20): the shim's environment.
  std::wstring environment = EnvironmentWith({{L"GOMAXPROCS", L"2"},
                                              {L"MAX_SHIM_VERSION", L"2"},
                                              {L"TTRPC_ADDRESS", Widen(ttrpc_address_)},
                                              {L"GRPC_ADDRESS", Widen(grpc_address_)},
                                              {L"NAMESPACE", Widen(ns)}});
  STARTUPINFOW startup{};
  startup.cb = sizeof(startup);
  PROCESS_INFORMATION process{};
  std::vector<wchar_t> line(command.begin(), command.end());
  line.push_back(L'\0');
  if (!CreateProcessW(nullptr, line.data(), nullptr, nullptr, FALSE,
                      CREATE_UNICODE_ENVIRONMENT | CREATE_NEW_PROCESS_GROUP, environment.data(),
                      nullptr, &startup, &process)) {
    why = "failed to start shim " + Utf8FromWide(binary.c_str()) + ": error " +
          std::to_string(GetLastError());
    return std::nullopt;
  }
  CloseHandle(process.hThread);
  DWORD code = 1;
  const bool ended = WaitForSingleObject(process.hProcess, 30000) == WAIT_OBJECT_0 &&
                     GetExitCodeProcess(process.hProcess, &code) && code == 0;
  CloseHandle(process.hProcess);
  if (!ended) {
    why = "shim " + Utf8FromWide(binary.c_str()) + " start failed (exit code " +
          std::to_string(code) + ")";
    return std::nullopt;
  }
  // The serving shim's process, named by its pipe (an identification-only handle).
  const HANDLE pipe =
      CreateFileW(Widen(address).c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                  SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
  ULONG server = 0;
  if (pipe != INVALID_HANDLE_VALUE) {
    GetNamedPipeServerProcessId(pipe, &server);
    CloseHandle(pipe);
  }
  shim_pid = server;
  return address;
}

GrpcResponse ContainerdService::CreateTask(const std::string& ns, const std::string& id) {
  {
    std::lock_guard lock(mutex_);
    ContainerRecord* record = Find(ns, id);
    if (!record)
      return Status(kGrpcNotFound,
                    "container " + Quoted(id) + " in namespace " + Quoted(ns) + ": not found");
    if (!record->task.empty()) return Status(kGrpcAlreadyExists, "task " + id + ": already exists");
    record->task = "creating";  // another Create waits for nothing: it is refused
  }
  DWORD shim_pid = 0;
  std::string why;
  auto address = StartShim(ns, id, shim_pid, why);
  TtrpcStatus status;
  std::string response;
  if (address && !CallShim(*address, ns, "Create", FieldOne(id), status, response, why))
    address.reset();
  if (address && status.code != 0) {
    why = status.message;
    address.reset();
  }
  std::lock_guard lock(mutex_);
  ContainerRecord* record = Find(ns, id);
  if (!record) return Status(kGrpcNotFound, "container " + Quoted(id) + ": deleted meanwhile");
  if (!address) {
    record->task.clear();
    return Status(kGrpcInternal, why);
  }
  record->task = "created";
  record->pid = DecodePid(response);
  record->shim_pid = shim_pid;
  record->shim_address = *address;
  record->exit_status = 0;
  Save();
  return Ok(EncodeCreateTaskResponse(id, record->pid));
}

GrpcResponse ContainerdService::TasksCall(const std::string& method, const std::string& ns,
                                          const std::string& message) {
  const std::string id = FieldOneOf(message).value_or("");
  if (method == kTasksCreate) return CreateTask(ns, id);
  if (method != kTasksStart && method != kTasksKill && method != kTasksDelete) return Ok();
  std::string address;
  std::string task;
  {
    std::lock_guard lock(mutex_);
    const ContainerRecord* record = Find(ns, id);
    if (!record)
      return Status(kGrpcNotFound,
                    "container " + Quoted(id) + " in namespace " + Quoted(ns) + ": not found");
    if (record->task.empty() || record->task == "creating")
      return Status(kGrpcNotFound, "no running task found: task " + id + " not found");
    address = record->shim_address;
    task = record->task;
  }
  TtrpcStatus status;
  std::string response;
  std::string why;
  if (method == kTasksDelete) {
    if (task == "running")
      return Status(kGrpcFailedPrecondition, "task must be stopped before deletion: running");
    // The shim's Delete then Shutdown (runtime/v2/shim.go): a shim already gone is no error.
    std::uint32_t exit_status = 0;
    if (CallShim(address, ns, "Delete", FieldOne(id), status, response, why) && status.code == 0)
      exit_status = ShimDeleteExitStatus(response).value_or(0);
    CallShim(address, ns, "Shutdown", FieldOne(id), status, response, why);
    std::lock_guard lock(mutex_);
    ContainerRecord* record = Find(ns, id);
    if (!record) return Ok(EncodeDeleteResponse(id, 0, exit_status));
    const std::uint32_t pid = record->pid;
    if (record->task == "stopped") exit_status = record->exit_status;
    record->task.clear();  // the container stays, without a task
    record->pid = record->exit_status = record->shim_pid = 0;
    record->shim_address.clear();
    Save();
    return Ok(EncodeDeleteResponse(id, pid, exit_status));
  }
  if (method == kTasksKill) {
    // KillRequest's signal (field 3), passed on as it is (the shim stand-in ends its task).
    if (!CallShim(address, ns, "Kill", message, status, response, why))
      return Status(kGrpcUnavailable, why);
    return status.code == 0 ? Ok() : Status(status.code, status.message);
  }
  if (task != "created") return Status(kGrpcFailedPrecondition, "task " + id + ": already started");
  if (!CallShim(address, ns, "Start", FieldOne(id), status, response, why))
    return Status(kGrpcUnavailable, why);
  if (status.code != 0) return Status(status.code, status.message);
  std::lock_guard lock(mutex_);
  ContainerRecord* record = Find(ns, id);
  if (record && record->task == "created") {
    record->task = "running";
    record->pid = DecodePid(response);
    Save();
  }
  return Ok(EncodePid(DecodePid(response)));
}

TtrpcStatus ContainerdService::Event(const TtrpcRequest& request, std::string&) {
  if (request.service != kEventsService || request.method != "Forward")
    return {kGrpcUnimplemented, request.service + "/" + request.method + ": not implemented"};
  const auto envelope = DecodeForwardRequest(request.payload);
  if (!envelope) return {kGrpcInvalidArgument, "a malformed ForwardRequest"};
  // The container of a task event: TaskExit's container_id, or field 1 (container_id) of the
  // other /tasks/ events of api/events/task.proto.
  std::optional<TaskExitEvent> exit;
  if (envelope->type_url == kTaskExitType) exit = DecodeTaskExit(envelope->event);
  const std::string container =
      exit ? exit->container_id : FieldOneOf(envelope->event).value_or("");
  AppendLine(folder_ + L"\\events.log", "event " + envelope->topic + " " + container);
  if (envelope->topic == kTaskExitTopic && exit && exit->id == exit->container_id) {
    std::lock_guard lock(mutex_);
    ContainerRecord* record = Find(envelope->ns, exit->container_id);
    if (record && (record->task == "running" || record->task == "created")) {
      record->task = "stopped";
      record->exit_status = exit->exit_status;
      Save();
    }
  }
  return {};
}

bool CallShim(const std::string& address, const std::string& ns, const std::string& method,
              const std::string& request, TtrpcStatus& status, std::string& response,
              std::string& why) {
  // A shim just started may not serve its pipe yet: missing pipes are retried a while.
  DWORD error = 0;
  const HANDLE pipe = DialPipe(Widen(address), 10000, true, error);
  if (pipe == INVALID_HANDLE_VALUE) {
    why = "cannot reach the shim at " + address + " (error " + std::to_string(error) + ")";
    return false;
  }
  PipeStream stream(pipe, 10000);
  TtrpcClient client(stream);
  if (!client.Call({kShimTaskService, method, request, 0, {{kNamespaceTtrpcHeader, ns}}}, status,
                   response, why)) {
    why = "the shim at " + address + ": " + why;
    return false;
  }
  return true;
}

}  // namespace dxshim::test::node_standin
