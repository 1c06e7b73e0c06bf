// The kubelet device plugin API subset (cri-api/deviceplugin/v1beta1/api.proto): field numbers
// and service methods pinned to upstream k8s.io/kubelet pkg/apis/deviceplugin/v1beta1/api.proto.
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "tests/support/pinned_fields.h"

namespace {

using dxshim::test::PinnedField;
using google::protobuf::FieldDescriptor;

constexpr PinnedField kPinned[] = {
    {"RegisterRequest", "version", 1, FieldDescriptor::TYPE_STRING, false},
    {"RegisterRequest", "endpoint", 2, FieldDescriptor::TYPE_STRING, false},
    {"RegisterRequest", "resource_name", 3, FieldDescriptor::TYPE_STRING, false},
    {"RegisterRequest", "options", 4, FieldDescriptor::TYPE_MESSAGE, false},
    {"DevicePluginOptions", "pre_start_required", 1, FieldDescriptor::TYPE_BOOL, false},
    {"DevicePluginOptions", "get_preferred_allocation_available", 2, FieldDescriptor::TYPE_BOOL,
     false},
    {"ListAndWatchResponse", "devices", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"Device", "ID", 1, FieldDescriptor::TYPE_STRING, false},
    {"Device", "health", 2, FieldDescriptor::TYPE_STRING, false},
    {"Device", "topology", 3, FieldDescriptor::TYPE_MESSAGE, false},
    {"TopologyInfo", "nodes", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"NUMANode", "ID", 1, FieldDescriptor::TYPE_INT64, false},
    {"PreStartContainerRequest", "devices_ids", 1, FieldDescriptor::TYPE_STRING, true},
    {"PreferredAllocationRequest", "container_requests", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerPreferredAllocationRequest", "available_deviceIDs", 1, FieldDescriptor::TYPE_STRING,
     true},
    {"ContainerPreferredAllocationRequest", "must_include_deviceIDs", 2,
     FieldDescriptor::TYPE_STRING, true},
    {"ContainerPreferredAllocationRequest", "allocation_size", 3, FieldDescriptor::TYPE_INT32,
     false},
    {"PreferredAllocationResponse", "container_responses", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerPreferredAllocationResponse", "deviceIDs", 1, FieldDescriptor::TYPE_STRING, true},
    {"AllocateRequest", "container_requests", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerAllocateRequest", "devices_ids", 1, FieldDescriptor::TYPE_STRING, true},
    {"AllocateResponse", "container_responses", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerAllocateResponse", "envs", 1, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerAllocateResponse", "mounts", 2, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerAllocateResponse", "devices", 3, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerAllocateResponse", "annotations", 4, FieldDescriptor::TYPE_MESSAGE, true},
    {"ContainerAllocateResponse", "cdi_devices", 5, FieldDescriptor::TYPE_MESSAGE, true},
    {"Mount", "container_path", 1, FieldDescriptor::TYPE_STRING, false},
    {"Mount", "host_path", 2, FieldDescriptor::TYPE_STRING, false},
    {"Mount", "read_only", 3, FieldDescriptor::TYPE_BOOL, false},
    {"DeviceSpec", "container_path", 1, FieldDescriptor::TYPE_STRING, false},
    {"DeviceSpec", "host_path", 2, FieldDescriptor::TYPE_STRING, false},
    {"DeviceSpec", "permissions", 3, FieldDescriptor::TYPE_STRING, false},
    {"CDIDevice", "name", 1, FieldDescriptor::TYPE_STRING, false},
};

TEST(DevicePluginApi, FieldNumbersMatchUpstream) {
  // Linked in: make sure the generated descriptors are registered.
  EXPECT_EQ(v1beta1::RegisterRequest::descriptor()->full_name(), "v1beta1.RegisterRequest");
  dxshim::test::ExpectPinnedFields("v1beta1", kPinned);
}

TEST(DevicePluginApi, ServicesAndMethodsAreKubelets) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const auto* registration = pool->FindServiceByName("v1beta1.Registration");
  ASSERT_NE(registration, nullptr);
  ASSERT_NE(registration->FindMethodByName("Register"), nullptr);
  const auto* plugin = pool->FindServiceByName("v1beta1.DevicePlugin");
  ASSERT_NE(plugin, nullptr);
  for (const char* method : {"GetDevicePluginOptions", "ListAndWatch", "GetPreferredAllocation",
                             "Allocate", "PreStartContainer"}) {
    ASSERT_NE(plugin->FindMethodByName(method), nullptr) << method;
  }
  EXPECT_TRUE(plugin->FindMethodByName("ListAndWatch")->server_streaming());
  // The generated stubs call the paths kubelet serves and dials.
  EXPECT_STREQ(v1beta1::Registration::service_full_name(), "v1beta1.Registration");
  EXPECT_STREQ(v1beta1::DevicePlugin::service_full_name(), "v1beta1.DevicePlugin");
}

}  // namespace
