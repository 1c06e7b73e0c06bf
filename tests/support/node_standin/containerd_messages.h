// The containerd API messages the stand-ins exchange, hand-encoded from containerd's protos
// (containerd/containerd v1.7.20, 8ccfc03e: api/services/containers/v1/containers.proto,
// api/services/tasks/v1/tasks.proto, api/runtime/task/v2/shim.proto,
// api/services/ttrpc/events/v1/events.proto, api/events/task.proto). Only the fields the
// stand-ins use; proto3 leaves zero values out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::test::node_standin {

// gRPC methods of containerd's API that ctr.exe calls and containerd.exe acts on.
inline constexpr char kContainersList[] = "/containerd.services.containers.v1.Containers/List";
inline constexpr char kContainersCreate[] = "/containerd.services.containers.v1.Containers/Create";
inline constexpr char kContainersDelete[] = "/containerd.services.containers.v1.Containers/Delete";
inline constexpr char kTasksCreate[] = "/containerd.services.tasks.v1.Tasks/Create";
inline constexpr char kTasksStart[] = "/containerd.services.tasks.v1.Tasks/Start";
inline constexpr char kTasksKill[] = "/containerd.services.tasks.v1.Tasks/Kill";
inline constexpr char kTasksDelete[] = "/containerd.services.tasks.v1.Tasks/Delete";
// The shim's TTRPC service (shim.proto) and containerd's events service for shims.
inline constexpr char kShimTaskService[] = "containerd.task.v2.Task";
inline constexpr char kEventsService[] = "containerd.services.events.ttrpc.v1.Events";
// gRPC and TTRPC metadata naming the namespace (namespaces/grpc.go, namespaces/ttrpc.go).
inline constexpr char kNamespaceHeader[] = "containerd-namespace";
inline constexpr char kNamespaceTtrpcHeader[] = "containerd-namespace-ttrpc";
// api/events/task.proto TaskExit's topic (runtime/events.go) and type URL (typeurl names a
// proto message by its full name).
inline constexpr char kTaskExitTopic[] = "/tasks/exit";
inline constexpr char kTaskExitType[] = "containerd.events.TaskExit";

// containers.proto Container { string id = 1; string image = 3; Runtime runtime = 4 { string
// name = 1; } }.
struct ContainerMessage {
  std::string id;
  std::string image;
  std::string runtime;
};
std::string EncodeContainer(const ContainerMessage& container);
std::optional<ContainerMessage> DecodeContainer(std::string_view bytes);
// ListContainersResponse { repeated Container containers = 1; }.
std::string EncodeContainerList(const std::vector<ContainerMessage>& containers);
std::optional<std::vector<ContainerMessage>> DecodeContainerList(std::string_view bytes);

// A message whose field 1 is the only one used: CreateContainerRequest { Container container },
// DeleteContainerRequest { id }, CreateTaskRequest, StartRequest and DeleteTaskRequest
// { container_id }, and the shim's CreateTaskRequest, StartRequest, DeleteRequest and
// ShutdownRequest { id }.
std::string FieldOne(std::string_view bytes);
std::optional<std::string> FieldOneOf(std::string_view message);

// tasks.proto KillRequest { container_id = 1; exec_id = 2; uint32 signal = 3; bool all = 4; },
// also the shim's KillRequest { id = 1; ...; signal = 3; all = 4 }.
std::string EncodeKill(const std::string& id, std::uint32_t signal);
// tasks.proto CreateTaskResponse { container_id = 1; uint32 pid = 2; }.
std::string EncodeCreateTaskResponse(const std::string& id, std::uint32_t pid);
// A message whose only field is uint32 pid = 1: tasks.proto StartResponse, the shim's
// CreateTaskResponse and StartResponse.
std::string EncodePid(std::uint32_t pid);
std::uint32_t DecodePid(std::string_view bytes);
// tasks.proto DeleteResponse { id = 1; uint32 pid = 2; uint32 exit_status = 3; }.
std::string EncodeDeleteResponse(const std::string& id, std::uint32_t pid, std::uint32_t exit);
// shim.proto DeleteResponse { uint32 pid = 1; uint32 exit_status = 2; }.
std::string EncodeShimDeleteResponse(std::uint32_t pid, std::uint32_t exit_status);
std::optional<std::uint32_t> ShimDeleteExitStatus(std::string_view bytes);

// events.proto ForwardRequest { Envelope envelope = 1 { timestamp = 1; string namespace = 2;
// string topic = 3; google.protobuf.Any event = 4 { type_url = 1; bytes value = 2 } } }.
struct EventEnvelope {
  std::int64_t unix_seconds = 0;
  std::string ns;
  std::string topic;
  std::string type_url;
  std::string event;
};
std::string EncodeForwardRequest(const EventEnvelope& envelope);
std::optional<EventEnvelope> DecodeForwardRequest(std::string_view bytes);

// task.proto TaskExit { container_id = 1; id = 2; uint32 pid = 3; uint32 exit_status = 4;
// Timestamp exited_at = 5 }.
struct TaskExitEvent {
  std::string container_id;
  std::string id;
  std::uint32_t pid = 0;
  std::uint32_t exit_status = 0;
};
std::string EncodeTaskExit(const TaskExitEvent& exit, std::int64_t unix_seconds);
std::optional<TaskExitEvent> DecodeTaskExit(std::string_view bytes);

}  // namespace dxshim::test::node_standin
