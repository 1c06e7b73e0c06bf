// containerd's API messages by hand (see containerd_messages.h for the protos).
#include "tests/support/node_standin/containerd_messages.h"

#include "tests/support/node_standin/protobuf_wire.h"

namespace dxshim::test::node_standin {

namespace {

void PutString(std::string& out, std::uint32_t field, std::string_view text) {
  if (!text.empty()) proto::PutBytes(out, field, text);  // proto3: "" is left out
}
void PutNumber(std::string& out, std::uint32_t field, std::uint64_t value) {
  if (value != 0) proto::PutUint(out, field, value);
}
// google/protobuf/timestamp.proto Timestamp { int64 seconds = 1; int32 nanos = 2; }.
std::string Timestamp(std::int64_t unix_seconds) {
  std::string out;
  PutNumber(out, 1, static_cast<std::uint64_t>(unix_seconds));
  return out;
}

}  // namespace

std::string EncodeContainer(const ContainerMessage& container) {
  std::string out;
  PutString(out, 1, container.id);
  PutString(out, 3, container.image);
  if (!container.runtime.empty()) {
    std::string runtime;
    PutString(runtime, 1, container.runtime);
    proto::PutBytes(out, 4, runtime);
  }
  return out;
}

std::optional<ContainerMessage> DecodeContainer(std::string_view bytes) {
  proto::Reader reader(bytes);
  proto::Field field;
  ContainerMessage container;
  while (reader.Next(field)) {
    if (field.wire_type != proto::kLength) continue;
    if (field.number == 1) container.id = field.bytes;
    if (field.number == 3) container.image = field.bytes;
    if (field.number == 4) container.runtime = proto::BytesField(field.bytes, 1).value_or("");
  }
  if (!reader.ok()) return std::nullopt;
  return container;
}

std::string EncodeContainerList(const std::vector<ContainerMessage>& containers) {
  std::string out;
  for (const auto& container : containers) proto::PutBytes(out, 1, EncodeContainer(container));
  return out;
}

std::optional<std::vector<ContainerMessage>> DecodeContainerList(std::string_view bytes) {
  proto::Reader reader(bytes);
  proto::Field field;
  std::vector<ContainerMessage> out;
  while (reader.Next(field)) {
    if (field.number != 1 || field.wire_type != proto::kLength) continue;
    auto container = DecodeContainer(field.bytes);
    if (!container) return std::nullopt;
    out.push_back(std::move(*container));
  }
  if (!reader.ok()) return std::nullopt;
  return out;
}

std::string FieldOne(std::string_view bytes) {
  std::string out;
  PutString(out, 1, bytes);
  return out;
}

std::optional<std::string> FieldOneOf(std::string_view message) {
  proto::Reader reader(message);
  proto::Field field;
  std::string value;
  while (reader.Next(field))
    if (field.number == 1 && field.wire_type == proto::kLength) value = field.bytes;
  if (!reader.ok()) return std::nullopt;
  return value;
}

std::string EncodeKill(const std::string& id, std::uint32_t signal) {
  std::string out;
  PutString(out, 1, id);
  PutNumber(out, 3, signal);
  return out;
}

std::string EncodeCreateTaskResponse(const std::string& id, std::uint32_t pid) {
  std::string out;
  PutString(out, 1, id);
  PutNumber(out, 2, pid);
  return out;
}

std::string EncodePid(std::uint32_t pid) {
  std::string out;
  PutNumber(out, 1, pid);
  return out;
}

std::uint32_t DecodePid(std::string_view bytes) {
  return static_cast<std::uint32_t>(proto::VarintField(bytes, 1).value_or(0));
}

std::string EncodeDeleteResponse(const std::string& id, std::uint32_t pid, std::uint32_t exit) {
  std::string out;
  PutString(out, 1, id);
  PutNumber(out, 2, pid);
  PutNumber(out, 3, exit);
  return out;
}

std::string EncodeShimDeleteResponse(std::uint32_t pid, std::uint32_t exit_status) {
  std::string out;
  PutNumber(out, 1, pid);
  PutNumber(out, 2, exit_status);
  return out;
}

std::optional<std::uint32_t> ShimDeleteExitStatus(std::string_view bytes) {
  proto::Reader reader(bytes);
  proto::Field field;
  std::uint32_t exit_status = 0;
  while (reader.Next(field))
    if (field.number == 2 && field.wire_type == proto::kVarint)
      exit_status = static_cast<std::uint32_t>(field.varint);
  if (!reader.ok()) return std::nullopt;
  return exit_status;
}

std::string EncodeForwardRequest(const EventEnvelope& envelope) {
  std::string any;
  PutString(any, 1, envelope.type_url);
  PutString(any, 2, envelope.event);
  std::string body;
  proto::PutBytes(body, 1, Timestamp(envelope.unix_seconds));
  PutString(body, 2, envelope.ns);
  PutString(body, 3, envelope.topic);
  proto::PutBytes(body, 4, any);
  std::string out;
  proto::PutBytes(out, 1, body);
  return out;
}

std::optional<EventEnvelope> DecodeForwardRequest(std::string_view bytes) {
  const auto body = proto::BytesField(bytes, 1);
  if (!body) return std::nullopt;
  EventEnvelope envelope;
  proto::Reader reader(*body);
  proto::Field field;
  while (reader.Next(field)) {
    if (field.wire_type != proto::kLength) continue;
    if (field.number == 1)
      envelope.unix_seconds =
          static_cast<std::int64_t>(proto::VarintField(field.bytes, 1).value_or(0));
    if (field.number == 2) envelope.ns = field.bytes;
    if (field.number == 3) envelope.topic = field.bytes;
    if (field.number == 4) {
      envelope.type_url = proto::BytesField(field.bytes, 1).value_or("");
      envelope.event = proto::BytesField(field.bytes, 2).value_or("");
    }
  }
  if (!reader.ok()) return std::nullopt;
  return envelope;
}

std::string EncodeTaskExit(const TaskExitEvent& exit, std::int64_t unix_seconds) {
  std::string out;
  PutString(out, 1, exit.container_id);
  PutString(out, 2, exit.id);
  PutNumber(out, 3, exit.pid);
  PutNumber(out, 4, exit.exit_status);
  proto::PutBytes(out, 5, Timestamp(unix_seconds));
  return out;
}

std::optional<TaskExitEvent> DecodeTaskExit(std::string_view bytes) {
  proto::Reader reader(bytes);
  proto::Field field;
  TaskExitEvent exit;
  while (reader.Next(field)) {
    if (field.number == 1 && field.wire_type == proto::kLength) exit.container_id = field.bytes;
    if (field.number == 2 && field.wire_type == proto::kLength) exit.id = field.bytes;
    if (field.number == 3 && field.wire_type == proto::kVarint)
      exit.pid = static_cast<std::uint32_t>(field.varint);
    if (field.number == 4 && field.wire_type == proto::kVarint)
      exit.exit_status = static_cast<std::uint32_t>(field.varint);
  }
  if (!reader.ok()) return std::nullopt;
  return exit;
}

}  // namespace dxshim::test::node_standin
