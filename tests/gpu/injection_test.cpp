// The target mappings, the pass-through scan and the decision, on the example inventories.
#include "shim/gpu/injection.h"

#include <gtest/gtest.h>

#include "devices/inventory_file.h"
#include "shim/gpu/container_decision.h"
#include "shim/gpu/create_request_scan.h"
#include "shim/gpu/ledger_sync.h"

namespace dxshim {
namespace {

const std::string kExamples = DXSHIM_SOURCE_DIR "/deploy/examples/inventories/";
const std::string kStore =
    "C:\\Windows\\System32\\DriverStore\\FileRepository\\nvgridsw_aws.inf_amd64_5b7ec8f2a8e3b31a";

devices::Inventory Load(const std::string& name) {
  devices::Inventory inv;
  inv.devices = devices::LoadInventoryFile(kExamples + name);
  return inv;
}

TargetOptions Windows() {
  TargetOptions t;
  t.target = config::Target::kWindows;
  return t;
}

runtime::v1::CreateContainerRequest Request(
    const std::map<std::string, std::string>& pod_annotations) {
  runtime::v1::CreateContainerRequest r;
  r.set_pod_sandbox_id("sandbox-1");
  r.mutable_config()->mutable_metadata()->set_name("app");
  r.mutable_sandbox_config()->mutable_metadata()->set_name("pod");
  r.mutable_sandbox_config()->mutable_metadata()->set_namespace_("default");
  for (const auto& [k, v] : pod_annotations) {
    (*r.mutable_sandbox_config()->mutable_annotations())[k] = v;
  }
  return r;
}

std::unique_ptr<devices::Allocator> SyncedAllocator(devices::AllocationPolicy policy = {}) {
  auto a = std::make_unique<devices::Allocator>(std::move(policy));
  a->BeginResync();
  a->FinishResync({});
  return a;
}

TEST(Injection, TheT4WindowsMappingExactly) {
  const auto t4 = Load("nvidia-t4.yaml").devices.at(0);
  runtime::v1::ContainerConfig config;
  const auto plan = PlanInjection(config, {t4}, false, "why", std::nullopt, Windows());
  ASSERT_EQ(plan.add_devices.size(), 1u);
  EXPECT_EQ(plan.add_devices[0].host_path(), "vpci-location-path://PCIROOT(0)#PCI(1E00)");
  EXPECT_EQ(plan.add_devices[0].container_path(), "");
  EXPECT_EQ(plan.add_devices[0].permissions(), "");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"nvcudadebugger.dll", "C:\\Windows\\System32\\nvcudadebugger.dll"},
      {"nvcuda_loader64.dll", "C:\\Windows\\System32\\nvcuda.dll"},
      {"nvcuvid64.dll", "C:\\Windows\\System32\\nvcuvid.dll"},
      {"nvEncodeAPI64.dll", "C:\\Windows\\System32\\nvEncodeAPI64.dll"},
      {"nvapi64.dll", "C:\\Windows\\System32\\nvapi64.dll"},
      {"nvml_loader.dll", "C:\\Windows\\System32\\nvml.dll"},
      {"OpenCL64.dll", "C:\\Windows\\System32\\OpenCL.dll"},
      {"vulkan-1-x64.dll", "C:\\Windows\\System32\\vulkan-1.dll"},
      {"nvcuda_loader32.dll", "C:\\Windows\\SysWOW64\\nvcuda.dll"},
      {"nvcuvid32.dll", "C:\\Windows\\SysWOW64\\nvcuvid.dll"},
      {"nvEncodeAPI.dll", "C:\\Windows\\SysWOW64\\nvEncodeAPI.dll"},
      {"nvapi.dll", "C:\\Windows\\SysWOW64\\nvapi.dll"},
      {"OpenCL32.dll", "C:\\Windows\\SysWOW64\\OpenCL.dll"},
      {"vulkan-1-x86.dll", "C:\\Windows\\SysWOW64\\vulkan-1.dll"},
  };
  ASSERT_EQ(plan.add_mounts.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(plan.add_mounts[i].host_path(), kStore + "\\" + expected[i].first);
    EXPECT_EQ(plan.add_mounts[i].container_path(), expected[i].second);
    EXPECT_TRUE(plan.add_mounts[i].readonly());
  }
  EXPECT_EQ(plan.labels.at(kDevicesLabel), t4.id);
  EXPECT_EQ(plan.labels.at(kSharingLabel), "shared");
  EXPECT_EQ(plan.annotations.at(kExplanationAnnotation),
            "why; 14 runtime file(s); env CUDA_VISIBLE_DEVICES, DXSHIM_GPU_LUIDS, "
            "DXSHIM_GPU_LOCATION_PATHS, DXSHIM_GPU_VENDOR_IDS");
}

TEST(Injection, KeepsWhatIsThereAndDeduplicatesCaseInsensitively) {
  const auto t4 = Load("nvidia-t4.yaml").devices.at(0);
  runtime::v1::ContainerConfig config;
  auto* own = config.add_mounts();
  own->set_host_path("C:\\mine\\OpenCL.dll");
  own->set_container_path("c:\\windows\\system32\\opencl.DLL");
  config.add_devices()->set_host_path("VPCI-LOCATION-PATH://pciroot(0)#pci(1e00)");
  const auto plan = PlanInjection(config, {t4, t4}, true, "why", std::nullopt, Windows());
  EXPECT_TRUE(plan.add_devices.empty());   // already there, in other case
  EXPECT_EQ(plan.add_mounts.size(), 13u);  // the pod's own OpenCL.dll stays, ours is not added
  EXPECT_EQ(plan.labels.at(kSharingLabel), "exclusive");
  auto rewritten = config;
  ApplyPlan(plan, rewritten);
  EXPECT_EQ(rewritten.mounts(0).host_path(), "C:\\mine\\OpenCL.dll");  // first, unchanged
  EXPECT_EQ(rewritten.mounts_size(), 14);
  EXPECT_EQ(rewritten.devices_size(), 1);
}

TEST(Injection, OnlyFilesThatExistOnTheHost) {
  const auto t4 = Load("nvidia-t4.yaml").devices.at(0);
  auto target = Windows();
  target.host_file = [](const std::string& path) {
    return path.ends_with("nvapi64.dll") ? HostFileState::kPresent : HostFileState::kAbsent;
  };
  const auto plan =
      PlanInjection(runtime::v1::ContainerConfig{}, {t4}, false, "why", std::nullopt, target);
  ASSERT_EQ(plan.add_mounts.size(), 1u);
  EXPECT_EQ(plan.add_mounts[0].container_path(), "C:\\Windows\\System32\\nvapi64.dll");
  EXPECT_EQ(plan.notes.size(), 13u);
  EXPECT_NE(plan.notes[0].find("missing on this host"), std::string::npos);
  EXPECT_TRUE(plan.gone.empty());
}

// A file that was there and is not any more is not mounted and not skipped quietly: the plan
// names it, and the interceptor re-reads the devices (gpu_interceptor_test.cpp).
TEST(Injection, GoneFilesAreNamedNotMounted) {
  const auto t4 = Load("nvidia-t4.yaml").devices.at(0);
  auto target = Windows();
  target.host_file = [](const std::string& path) {
    return path.ends_with("nvapi64.dll") ? HostFileState::kGone : HostFileState::kPresent;
  };
  const auto plan =
      PlanInjection(runtime::v1::ContainerConfig{}, {t4}, false, "why", std::nullopt, target);
  EXPECT_EQ(plan.add_mounts.size(), 13u);
  EXPECT_EQ(plan.gone, (std::vector<std::string>{kStore + "\\nvapi64.dll"}));
}

// Kubelet on Windows sends a pod volume's mountPath as c:/... (makeAbsolutePath); containerd
// cleans it. Each of these forms already mounts the T4's nvcuda.dll, so dxshim adds none of its
// own.
TEST(Injection, AMountInAnyFormKubeletSendsIsAlreadyMounted) {
  const auto t4 = Load("nvidia-t4.yaml").devices.at(0);
  for (const char* form :
       {"c:/Windows/System32/nvcuda.dll", "C:\\Windows\\System32\\NVCUDA.DLL",
        "\\Windows\\System32\\nvcuda.dll", "c:\\windows\\system32\\.\\nvcuda.dll"}) {
    SCOPED_TRACE(form);
    runtime::v1::ContainerConfig config;
    auto* own = config.add_mounts();
    own->set_host_path("c:\\var\\lib\\kubelet\\pods\\uid\\volumes\\nvcuda.dll");
    own->set_container_path(form);
    const auto plan = PlanInjection(config, {t4}, false, "why", std::nullopt, Windows());
    EXPECT_EQ(plan.add_mounts.size(), 13u);
    for (const auto& m : plan.add_mounts) {
      EXPECT_NE(m.container_path(), "C:\\Windows\\System32\\nvcuda.dll");
    }
    ASSERT_EQ(plan.notes.size(), 1u);
    EXPECT_EQ(plan.notes[0], "C:\\Windows\\System32\\nvcuda.dll: already mounted, " + kStore +
                                 "\\nvcuda_loader64.dll not added");
  }
  // SysWOW64's nvcuda.dll is another file: still added.
  runtime::v1::ContainerConfig config;
  config.add_mounts()->set_container_path("c:/Windows/SysWOW64/nvcuda.dll");
  EXPECT_EQ(PlanInjection(config, {t4}, false, "", std::nullopt, Windows()).add_mounts.size(), 13u);
}

TEST(Injection, LinuxMapping) {
  devices::Device d;
  d.id = "0000:01:00.0";
  d.location_path = "/dev/dri/renderD128";
  d.driver_store = "/opt/driver/";
  d.system32 = {{"lib\\libcuda.so.1", "libcuda.so.1"}};
  d.syswow64 = {{"lib32/libcuda.so.1", "libcuda.so.1"}};
  TargetOptions t;
  t.linux_system32_path = "/usr/lib/gpu";
  const auto plan = PlanInjection({}, {d}, false, "why", std::nullopt, t);
  ASSERT_EQ(plan.add_devices.size(), 1u);
  EXPECT_EQ(plan.add_devices[0].host_path(), "/dev/dri/renderD128");
  EXPECT_EQ(plan.add_devices[0].container_path(), "/dev/dri/renderD128");
  EXPECT_EQ(plan.add_devices[0].permissions(), "rw");
  ASSERT_EQ(plan.add_mounts.size(), 2u);
  EXPECT_EQ(plan.add_mounts[0].host_path(), "/opt/driver/lib/libcuda.so.1");
  EXPECT_EQ(plan.add_mounts[0].container_path(), "/usr/lib/gpu/libcuda.so.1");
  EXPECT_EQ(plan.add_mounts[1].container_path(), "/usr/lib32/dxshim/libcuda.so.1");
}

TEST(PassThroughScan, DecodesOnlyWhatMayNeedDevices) {
  std::string bytes;
  auto plain = Request({{"example.com/x", "1"}});
  (*plain.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";  // container's: not ours
  plain.SerializeToString(&bytes);
  EXPECT_FALSE(MayNeedDevices(bytes));
  Request({{"dxshim.io/gpu", "1"}}).SerializeToString(&bytes);
  EXPECT_TRUE(MayNeedDevices(bytes));
  auto with_device = Request({});
  with_device.mutable_config()->add_devices()->set_host_path("/dev/fuse");
  with_device.SerializeToString(&bytes);
  EXPECT_TRUE(MayNeedDevices(bytes));
  EXPECT_TRUE(MayNeedDevices(bytes.substr(0, bytes.size() - 3)));  // malformed: decoder decides
  EXPECT_FALSE(MayNeedDevices(""));
  // The annotation dxshim's device plugin gives kubelet for the container (resources.limits).
  auto by_limit = Request({});
  (*by_limit.mutable_config()->mutable_annotations())["dxshim.io/plugin-slots"] = "gpu-1a2b3c4d-0";
  by_limit.SerializeToString(&bytes);
  EXPECT_TRUE(MayNeedDevices(bytes));
}

TEST(Decision, AnnotationsNeverNameAPathThatGetsMounted) {
  // A hostile pod: pins and required files that are paths. Nothing but inventory paths may
  // appear in the rewrite, and here nothing matches at all.
  const auto node = Load("nvidia-t4.yaml");
  const auto owner = SyncedAllocator();
  auto& allocator = *owner;
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"dxshim.io/device", "C:\\Windows\\System32\\config\\SAM"},
           {"dxshim.io/requires", "..\\..\\SAM"},
           {"dxshim.io/vendor", "\\\\evil\\share"}}) {
    try {
      Decide(Request({{key, value}}), node, allocator, Windows());
      ADD_FAILURE() << key << " was accepted";
    } catch (const DecisionError& e) {
      EXPECT_TRUE(e.code() == grpc::StatusCode::INVALID_ARGUMENT ||
                  e.code() == grpc::StatusCode::FAILED_PRECONDITION)
          << e.what();
    }
  }
  EXPECT_TRUE(allocator.Usage().empty());
  const auto d = Decide(Request({{"dxshim.io/gpu", "1"}}), node, allocator, Windows());
  for (const auto& m : d.plan.add_mounts) EXPECT_TRUE(m.host_path().starts_with(kStore));
}

TEST(Decision, CodesAndNamespaces) {
  const auto node = Load("nvidia-t4.yaml");
  devices::AllocationPolicy policy;
  policy.deny_namespaces = {"default"};
  const auto owner = SyncedAllocator(policy);
  auto& allocator = *owner;
  const auto code = [&](const runtime::v1::CreateContainerRequest& r) {
    try {
      Decide(r, node, allocator, Windows());
    } catch (const DecisionError& e) {
      return e.code();
    }
    return grpc::StatusCode::OK;
  };
  EXPECT_EQ(code(Request({{"dxshim.io/gpu", "1"}})), grpc::StatusCode::FAILED_PRECONDITION);
  auto other = Request({{"dxshim.io/gpu", "1"}});
  other.mutable_sandbox_config()->mutable_metadata()->set_namespace_("gpu");
  EXPECT_EQ(code(other), grpc::StatusCode::OK);
  other.set_pod_sandbox_id("sandbox-2");
  EXPECT_EQ(code(other), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(code(Request({{"dxshim.io/gpu", "x"}})), grpc::StatusCode::INVALID_ARGUMENT);
  devices::Allocator unsynced({});
  try {
    Decide(other, node, unsynced, Windows());
    ADD_FAILURE();
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE);
  }
  // Scope: a container outside dxshim.io/containers passes through.
  auto scoped = Request({{"dxshim.io/gpu", "1"}, {"dxshim.io/containers", "trainer"}});
  scoped.mutable_sandbox_config()->mutable_metadata()->set_namespace_("gpu");
  EXPECT_TRUE(Decide(scoped, node, allocator, Windows()).pass_through);
}

// vm-runtime-handlers: a GPU request in a pod whose handler runs it in a VM is refused before
// anything is held; a device another plugin put in is left as it is, with no runtime files.
TEST(Decision, PodsInVirtualMachinesGetNoGpu) {
  const auto node = Load("nvidia-t4.yaml");
  const auto owner = SyncedAllocator();
  auto& allocator = *owner;
  auto target = Windows();
  target.vm_runtime_handlers = {"runhcs-wcow-hypervisor"};
  const auto request = Request({{"dxshim.io/gpu", "1"}});
  try {
    Decide(request, node, allocator, target, std::string("runhcs-wcow-hypervisor"));
    ADD_FAILURE() << "a GPU in a Hyper-V pod";
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(e.outcome(), DecisionOutcome::kVmSandbox);
    EXPECT_NE(std::string(e.what()).find("'runhcs-wcow-hypervisor' runs pods in virtual machines"),
              std::string::npos)
        << e.what();
  }
  // The dxshim resource (the device plugin's slots) is a GPU request too.
  auto by_limit = Request({});
  (*by_limit.mutable_config()
        ->mutable_annotations())[std::string(devices::kPluginSlotsAnnotation)] = "slot-0";
  EXPECT_THROW(Decide(by_limit, node, allocator, target, std::string("runhcs-wcow-hypervisor")),
               DecisionError);
  // Nothing was held: the same pod under the default handler gets the GPU.
  EXPECT_FALSE(Decide(request, node, allocator, target, std::string("")).pass_through);
  // Another plugin's device in a VM pod: left alone, and the log says why.
  auto assigned = Request({});
  assigned.set_pod_sandbox_id("sandbox-vm");
  assigned.mutable_config()->add_devices()->set_host_path(
      "vpci-location-path://PCIROOT(0)#PCI(1E00)");
  const auto left =
      Decide(assigned, node, allocator, target, std::string("runhcs-wcow-hypervisor"));
  EXPECT_TRUE(left.pass_through);
  EXPECT_TRUE(left.notable);
  EXPECT_NE(left.why.find("left as they are"), std::string::npos);
  // A sandbox dxshim has not learned yet: retry once the runtime has listed it.
  try {
    Decide(request, node, allocator, target, std::nullopt);
    ADD_FAILURE();
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE);
  }
  // Without VM handlers configured (Linux's default) the handler does not matter.
  EXPECT_TRUE(Decide(Request({}), node, allocator, Windows(), std::nullopt).pass_through);
}

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
    if (!devices.empty()) (*c->mutable_labels())[kDevicesLabel] = devices;
    if (!sharing.empty()) (*c->mutable_labels())[kSharingLabel] = sharing;
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

}  // namespace
}  // namespace dxshim
