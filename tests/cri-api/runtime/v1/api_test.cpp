// The cri-api subset: field numbers pinned to upstream CRI runtime.v1, and fields the subset does
// not declare surviving a decode/encode round trip.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "cri_superset.pb.h"
#include "runtime/v1/api.grpc.pb.h"
#include "shim/proxy/cri_methods.h"
#include "shim/proxy/interceptor.h"
#include "tests/support/pinned_fields.h"

namespace {

using dxshim::test::PinnedField;
using google::protobuf::FieldDescriptor;

// From upstream k8s.io/cri-api pkg/apis/runtime/v1/api.proto (cri-api/runtime/v1/api.proto says
// which subset; docs/architecture.md, "The relay").
constexpr PinnedField kPinned[] = {
    {"CreateContainerRequest", "pod_sandbox_id", 1, FieldDescriptor::TYPE_STRING, false},
    {"CreateContainerRequest", "config", 2, FieldDescriptor::TYPE_MESSAGE, false},
    {"CreateContainerRequest", "sandbox_config", 3, FieldDescriptor::TYPE_MESSAGE, false},
    {"ContainerConfig", "metadata", 1, FieldDescriptor::TYPE_MESSAGE, false},
    {"ContainerConfig", "image", 2, FieldDescriptor::TYPE_MESSAGE, false},
    {"ContainerConfig", "command", 3, FieldDescriptor::TYPE_STRING, true},
    {"ContainerConfig", "args", 4, FieldDescriptor::TYPE_STRING, true},
    {"ContainerConfig", "working_dir", 5, FieldDescriptor::TYPE_STRING, false},
    {"ContainerConfig", "envs", 6, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerConfig", "mounts", 7, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerConfig", "devices", 8, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerConfig", "labels", 9, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerConfig", "annotations", 10, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerConfig", "log_path", 11, FieldDescriptor::TYPE_STRING, false},
    {"ContainerConfig", "stdin_open", 12, FieldDescriptor::TYPE_BOOL, false},
    {"ContainerConfig", "stdin_once", 13, FieldDescriptor::TYPE_BOOL, false},
    {"ContainerConfig", "tty", 14, FieldDescriptor::TYPE_BOOL, false},
    {"ContainerConfig", "linux", 15, FieldDescriptor::TYPE_MESSAGE, false},
    {"ContainerConfig", "windows", 16, FieldDescriptor::TYPE_MESSAGE, false},
    {"ContainerConfig", "CDI_devices", 17, FieldDescriptor::TYPE_MESSAGE, true},
    {"Device", "container_path", 1, FieldDescriptor::TYPE_STRING, false},
    {"Device", "host_path", 2, FieldDescriptor::TYPE_STRING, false},
    {"Device", "permissions", 3, FieldDescriptor::TYPE_STRING, false},
    {"Mount", "container_path", 1, FieldDescriptor::TYPE_STRING, false},
    {"Mount", "host_path", 2, FieldDescriptor::TYPE_STRING, false},
    {"Mount", "readonly", 3, FieldDescriptor::TYPE_BOOL, false},
    {"Mount", "selinux_relabel", 4, FieldDescriptor::TYPE_BOOL, false},
    {"KeyValue", "key", 1, FieldDescriptor::TYPE_STRING, false},
    {"KeyValue", "value", 2, FieldDescriptor::TYPE_BYTES, false},
    {"PodSandboxConfig", "metadata", 1, FieldDescriptor::TYPE_MESSAGE, false},
    {"PodSandboxConfig", "labels", 6, FieldDescriptor::TYPE_MESSAGE, true},
    {"PodSandboxConfig", "annotations", 7, FieldDescriptor::TYPE_MESSAGE, true},
    {"PodSandboxConfig", "linux", 8, FieldDescriptor::TYPE_MESSAGE, false},
    {"ContainerMetadata", "name", 1, FieldDescriptor::TYPE_STRING, false},
    {"ContainerMetadata", "attempt", 2, FieldDescriptor::TYPE_UINT32, false},
    {"PodSandboxMetadata", "name", 1, FieldDescriptor::TYPE_STRING, false},
    {"PodSandboxMetadata", "uid", 2, FieldDescriptor::TYPE_STRING, false},
    {"PodSandboxMetadata", "namespace", 3, FieldDescriptor::TYPE_STRING, false},
    {"PodSandboxMetadata", "attempt", 4, FieldDescriptor::TYPE_UINT32, false},
    {"CreateContainerResponse", "container_id", 1, FieldDescriptor::TYPE_STRING, false},
    {"ContainerEventResponse", "container_id", 1, FieldDescriptor::TYPE_STRING, false},
    // Each sandbox's runtime handler (vm-runtime-handlers): learned from RunPodSandbox and from
    // ListPodSandbox.
    {"RunPodSandboxRequest", "config", 1, FieldDescriptor::TYPE_MESSAGE, false},
    {"RunPodSandboxRequest", "runtime_handler", 2, FieldDescriptor::TYPE_STRING, false},
    {"RunPodSandboxResponse", "pod_sandbox_id", 1, FieldDescriptor::TYPE_STRING, false},
    {"RemovePodSandboxRequest", "pod_sandbox_id", 1, FieldDescriptor::TYPE_STRING, false},
    {"ListPodSandboxResponse", "items", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"PodSandbox", "id", 1, FieldDescriptor::TYPE_STRING, false},
    {"PodSandbox", "state", 3, FieldDescriptor::TYPE_ENUM, false},
    {"PodSandbox", "runtime_handler", 7, FieldDescriptor::TYPE_STRING, false},
    {"ContainerEventResponse", "containers_statuses", 5, FieldDescriptor::TYPE_MESSAGE, true},
};

TEST(CriApi, FieldNumbersMatchUpstream) { dxshim::test::ExpectPinnedFields("runtime.v1", kPinned); }

// Fields renamed because their CRI names are macros on Windows keep CRI's numbers and JSON names.
TEST(CriApi, FieldsRenamedForWindowsKeepTheirCriJsonNames) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const struct {
    const char* message;
    const char* field;
    int number;
    const char* json;
  } renamed[] = {{"ContainerConfig", "stdin_open", 12, "stdin"},
                 {"ExecSyncResponse", "stdout_data", 1, "stdout"},
                 {"ExecSyncResponse", "stderr_data", 2, "stderr"}};
  for (const auto& r : renamed) {
    SCOPED_TRACE(std::string(r.message) + "." + r.field);
    const auto* message = pool->FindMessageTypeByName(std::string("runtime.v1.") + r.message);
    ASSERT_NE(message, nullptr);
    const auto* field = message->FindFieldByName(r.field);
    ASSERT_NE(field, nullptr);
    EXPECT_EQ(field->number(), r.number);
    EXPECT_EQ(field->json_name(), r.json);
  }
}

TEST(CriApi, InterceptedMethodIsTheGeneratedCreateContainer) {
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "runtime.v1.RuntimeService");
  ASSERT_NE(service, nullptr);
  const auto* method = service->FindMethodByName("CreateContainer");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ("/" + service->full_name() + "/" + method->name(), dxshim::kCreateContainerMethod);
  EXPECT_TRUE(service->FindMethodByName("GetContainerEvents")->server_streaming());
}

dxshim::test::superset::CreateContainerRequest NewerKubeletRequest() {
  dxshim::test::superset::CreateContainerRequest req;
  req.set_pod_sandbox_id("pod-1");
  req.set_future_extension(std::string("\x00\x01\xff", 3));
  auto* c = req.mutable_config();
  c->mutable_metadata()->set_name("gpu");
  c->mutable_image()->set_image("mcr.microsoft.com/windows/servercore:ltsc2022");
  c->mutable_image()->set_user_specified_image("servercore:ltsc2022");
  c->add_command("cmd.exe");
  auto* env = c->add_envs();
  env->set_key("BINARY");
  env->set_value(std::string("\x00\xfe\x80 not utf-8", 13));
  auto* m = c->add_mounts();
  m->set_container_path("C:\\data");
  m->set_host_path("C:\\host\\data");
  m->set_readonly(true);
  m->set_recursive_read_only(true);
  m->add_uidmappings()->set_length(65536);
  m->mutable_image()->set_image("ignored");
  c->add_devices()->set_host_path("class/5B45201D-F2F2-4F3B-85BB-30FF1F953599");
  (*c->mutable_annotations())["a"] = "b";
  c->mutable_windows()->mutable_resources()->set_cpu_count(4);
  c->mutable_linux()->mutable_resources()->set_memory_limit_in_bytes(1 << 30);
  c->set_stop_signal(15);
  c->set_from_the_future("still here");
  auto* p = req.mutable_sandbox_config();
  p->mutable_metadata()->set_namespace_("games");
  p->mutable_dns_config()->add_servers("10.0.0.10");
  p->add_port_mappings()->set_container_port(8080);
  (*p->mutable_annotations())["dxshim.io/gpu"] = "1";
  p->mutable_windows()->mutable_security_context()->set_host_process(true);
  return req;
}

TEST(CriApi, UndeclaredFieldsSurviveDecodeEncode) {
  const auto original = NewerKubeletRequest();
  const std::string wire = original.SerializeAsString();

  runtime::v1::CreateContainerRequest subset;
  ASSERT_TRUE(subset.ParseFromString(wire));
  EXPECT_EQ(subset.pod_sandbox_id(), "pod-1");
  EXPECT_EQ(subset.sandbox_config().annotations().at("dxshim.io/gpu"), "1");
  EXPECT_EQ(subset.config().envs(0).value(), std::string("\x00\xfe\x80 not utf-8", 13));
  const auto& config = subset.config();
  EXPECT_GT(config.GetReflection()->GetUnknownFields(config).field_count(), 0);

  const std::string reencoded = subset.SerializeAsString();
  dxshim::test::superset::CreateContainerRequest back;
  ASSERT_TRUE(back.ParseFromString(reencoded));
  std::string diff;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(original, back)) << diff;
}

TEST(CriApi, UndeclaredFieldsSurviveAnEdit) {
  // What the injection of later issues does: decode, add a device and a mount, encode.
  const auto original = NewerKubeletRequest();
  runtime::v1::CreateContainerRequest subset;
  ASSERT_TRUE(subset.ParseFromString(original.SerializeAsString()));
  subset.mutable_config()->add_devices()->set_host_path(
      "vpci-location-path://PCIROOT(0)#PCI(0100)");
  auto* mount = subset.mutable_config()->add_mounts();
  mount->set_container_path("C:\\Windows\\System32\\nvcuda.dll");
  mount->set_host_path("C:\\DriverStore\\nvcuda_loader64.dll");
  mount->set_readonly(true);

  dxshim::test::superset::CreateContainerRequest back;
  ASSERT_TRUE(back.ParseFromString(subset.SerializeAsString()));
  EXPECT_EQ(back.config().from_the_future(), "still here");
  EXPECT_EQ(back.config().stop_signal(), 15);
  EXPECT_TRUE(back.config().mounts(0).recursive_read_only());
  EXPECT_EQ(back.config().mounts(0).uidmappings(0).length(), 65536u);
  EXPECT_FALSE(back.config().mounts(1).recursive_read_only());
  EXPECT_EQ(back.config().windows().resources().cpu_count(), 4);
  EXPECT_TRUE(back.sandbox_config().windows().security_context().host_process());
  EXPECT_EQ(back.future_extension(), std::string("\x00\x01\xff", 3));
  ASSERT_EQ(back.config().devices_size(), 2);
  EXPECT_EQ(back.config().devices(1).host_path(), "vpci-location-path://PCIROOT(0)#PCI(0100)");
}

}  // namespace

namespace {

TEST(CriApi, UnaryMethodTableAgreesWithTheProto) {
  for (const char* name : {"runtime.v1.RuntimeService", "runtime.v1.ImageService"}) {
    const auto* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr);
    for (int i = 0; i < service->method_count(); ++i) {
      const auto* m = service->method(i);
      const auto full = "/" + service->full_name() + "/" + m->name();
      EXPECT_EQ(dxshim::IsUnaryCriMethod(full), !m->client_streaming() && !m->server_streaming())
          << full;
    }
  }
  // Methods of CRI the subset does not declare, and names that only look like CRI.
  EXPECT_TRUE(dxshim::IsUnaryCriMethod("/runtime.v1.RuntimeService/UpdateContainerResources"));
  EXPECT_TRUE(dxshim::IsUnaryCriMethod("/runtime.v1.ImageService/ImageFsInfo"));
  EXPECT_FALSE(dxshim::IsUnaryCriMethod("/runtime.v1.RuntimeService/StreamContainers"));
  EXPECT_FALSE(dxshim::IsUnaryCriMethod("/runtime.v1alpha2.RuntimeService/Version"));
  EXPECT_FALSE(dxshim::IsUnaryCriMethod("/runtime.v1.RuntimeService/"));
  EXPECT_FALSE(dxshim::IsUnaryCriMethod("/other.Service/Version"));
}

TEST(CriApi, LongLivedStreamsAreTheStreamingCriMethods) {
  EXPECT_TRUE(dxshim::IsLongLivedStream("/runtime.v1.RuntimeService/GetContainerEvents"));
  EXPECT_TRUE(dxshim::IsLongLivedStream("/runtime.v1.RuntimeService/StreamContainers"));
  EXPECT_FALSE(dxshim::IsLongLivedStream("/runtime.v1.RuntimeService/ListContainers"));
  EXPECT_FALSE(dxshim::IsLongLivedStream("/runtime.v1.RuntimeService/Version"));
}

}  // namespace
