// The pass-through scan (shim/gpu/create_request_scan.h): a CreateContainer is decoded only when
// its pod has a dxshim.io/ annotation, its config a device or dxshim's plugin-slots annotation;
// malformed bytes go to the decoder.
#include "shim/gpu/create_request_scan.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/gpu_requests.h"

namespace dxshim {
namespace {

using test::PodCreateRequest;

TEST(PassThroughScan, DecodesOnlyWhatMayNeedDevices) {
  std::string bytes;
  auto plain = PodCreateRequest({{"example.com/x", "1"}});
  (*plain.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";  // container's: not ours
  plain.SerializeToString(&bytes);
  EXPECT_FALSE(MayNeedDevices(bytes));
  PodCreateRequest({{"dxshim.io/gpu", "1"}}).SerializeToString(&bytes);
  EXPECT_TRUE(MayNeedDevices(bytes));
  auto with_device = PodCreateRequest({});
  with_device.mutable_config()->add_devices()->set_host_path("/dev/fuse");
  with_device.SerializeToString(&bytes);
  EXPECT_TRUE(MayNeedDevices(bytes));
  EXPECT_TRUE(MayNeedDevices(bytes.substr(0, bytes.size() - 3)));  // malformed: decoder decides
  EXPECT_FALSE(MayNeedDevices(""));
  // The annotation dxshim's device plugin gives kubelet for the container (resources.limits).
  auto by_limit = PodCreateRequest({});
  (*by_limit.mutable_config()->mutable_annotations())["dxshim.io/plugin-slots"] = "gpu-1a2b3c4d-0";
  by_limit.SerializeToString(&bytes);
  EXPECT_TRUE(MayNeedDevices(bytes));
}

}  // namespace
}  // namespace dxshim
