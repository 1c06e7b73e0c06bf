// The runtime record (shim/runtime_record/runtime_record.h): what a ListPodSandbox and a
// ListContainers answer say about who holds GPUs (ready sandboxes, the containers dxshim labelled,
// exited or not), and which runtime handler runs each sandbox.
#include "shim/runtime_record/runtime_record.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "shim/base/dxshim_keys.h"

namespace dxshim {
namespace {

TEST(Ledger, WhatTheRuntimesSandboxesAndContainersSay) {
  runtime::v1::ListPodSandboxResponse sandboxes;
  const auto sandbox = [&](const std::string& id, runtime::v1::PodSandboxState state) {
    auto* s = sandboxes.add_items();
    s->set_id(id);
    s->set_state(state);
  };
  sandbox("ready", runtime::v1::SANDBOX_READY);
  sandbox("stopped", runtime::v1::SANDBOX_NOTREADY);
  sandbox("future-state", static_cast<runtime::v1::PodSandboxState>(7));  // may be live: kept
  runtime::v1::ListContainersResponse listed;
  const auto add = [&](const std::string& id, runtime::v1::ContainerState state,
                       const std::string& devices, const std::string& sharing) {
    auto* c = listed.add_containers();
    c->set_id(id);
    c->set_pod_sandbox_id("pod-" + id);
    c->set_state(state);
    c->mutable_metadata()->set_name("app-" + id);
    if (!devices.empty()) (*c->mutable_labels())[keys::kDevicesLabel] = devices;
    if (!sharing.empty()) (*c->mutable_labels())[keys::kSharingLabel] = sharing;
  };
  add("running", runtime::v1::CONTAINER_RUNNING, "a,b", "exclusive");
  add("created", runtime::v1::CONTAINER_CREATED, "a", "shared");
  add("unknown", runtime::v1::CONTAINER_UNKNOWN, "b", "");
  add("exited", runtime::v1::CONTAINER_EXITED, "a", "shared");  // its sandbox decides
  add("no-gpu", runtime::v1::CONTAINER_RUNNING, "", "");
  const auto record = ReadRuntimeRecord(sandboxes, listed);
  EXPECT_EQ(record.ready_sandboxes, (std::set<std::string>{"ready", "future-state"}));
  ASSERT_EQ(record.containers.size(), 4u);
  EXPECT_EQ(record.containers[0].container_id, "running");
  EXPECT_EQ(record.containers[0].sandbox_id, "pod-running");
  EXPECT_EQ(record.containers[0].name, "app-running");  // how metrics name it after a restart
  EXPECT_EQ(record.containers[0].device_ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(record.containers[0].exclusive);
  EXPECT_FALSE(record.containers[0].exited);
  EXPECT_EQ(record.containers[1].container_id, "created");
  EXPECT_FALSE(record.containers[1].exclusive);
  EXPECT_FALSE(record.containers[1].exited);
  EXPECT_EQ(record.containers[2].container_id, "unknown");
  EXPECT_FALSE(record.containers[2].exited);  // may still run
  EXPECT_EQ(record.containers[3].container_id, "exited");
  EXPECT_TRUE(record.containers[3].exited);
  sandboxes.mutable_items(1)->set_runtime_handler("runhcs-wcow-hypervisor");
  EXPECT_EQ(ReadSandboxHandlers(sandboxes),
            (std::map<std::string, std::string>{
                {"ready", ""}, {"stopped", "runhcs-wcow-hypervisor"}, {"future-state", ""}}));
}

// The memory each container reserved (its dxshim.io/gpu-memory label): one value for all its GPUs
// or one per GPU; missing or unreadable means "recorded before memory was counted" (the default),
// never a number dxshim made up. Pod names come from the sandboxes' metadata.
TEST(Ledger, TheRecordedGpuMemory) {
  runtime::v1::ListPodSandboxResponse sandboxes;
  auto* s = sandboxes.add_items();
  s->set_id("pod-1");
  s->set_state(runtime::v1::SANDBOX_READY);
  s->mutable_metadata()->set_name("encoder");
  s->mutable_metadata()->set_namespace_("media");
  runtime::v1::ListContainersResponse listed;
  const auto add = [&](const std::string& devices, const char* memory) {
    auto* c = listed.add_containers();
    c->set_pod_sandbox_id("pod-1");
    (*c->mutable_labels())[keys::kDevicesLabel] = devices;
    if (memory) (*c->mutable_labels())[keys::kGpuMemoryLabel] = memory;
  };
  add("a,b", "6442450944");
  add("a,b", "1073741824,2147483648");
  add("a,b", "1,2,3");  // not one per GPU
  add("a", "6Gi");      // not bytes
  add("a", "0");
  add("a", nullptr);
  const auto record = ReadRuntimeRecord(sandboxes, listed);
  EXPECT_EQ(record.pod_names.at("pod-1"), "media/encoder");
  ASSERT_EQ(record.containers.size(), 6u);
  EXPECT_EQ(record.containers[0].MemoryOn(1), 6442450944u);
  EXPECT_EQ(record.containers[1].MemoryOn(0), 1073741824u);
  EXPECT_EQ(record.containers[1].MemoryOn(1), 2147483648u);
  for (std::size_t i = 2; i < 6; ++i) {
    EXPECT_EQ(record.containers[i].MemoryOn(0), std::nullopt) << i;
  }
}

// A dxshim.io/devices label of blanks and commas names no device (found by
// tests/fuzz/runtime_record_fuzz.cpp): its container holds nothing, so its pod is not one that
// holds GPUs, and writing the record back as dxshim labels it reads back the same.
TEST(Ledger, ALabelThatNamesNoDeviceHoldsNone) {
  runtime::v1::ListPodSandboxResponse sandboxes;
  auto* s = sandboxes.add_items();
  s->set_id("pod-1");
  s->set_state(runtime::v1::SANDBOX_READY);
  runtime::v1::ListContainersResponse listed;
  for (const char* devices : {" ", ",", " , ,"}) {
    auto* c = listed.add_containers();
    c->set_id(devices);
    c->set_pod_sandbox_id("pod-1");
    (*c->mutable_labels())[keys::kDevicesLabel] = devices;
  }
  const auto record = ReadRuntimeRecord(sandboxes, listed);
  EXPECT_TRUE(record.containers.empty());
  EXPECT_EQ(HoldingPods(record), 0u);
}

}  // namespace
}  // namespace dxshim
