// The decision on a CreateContainer (shim/gpu/container_decision.h) on the example inventories: no
// annotation makes dxshim mount a path the inventory did not give, each refusal has its gRPC code
// (namespaces, exhaustion, bad input, a ledger not yet read), and pods in VMs get no GPU.
#include "shim/gpu/container_decision.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "devices/dxshim_keys.h"
#include "tests/support/gpu_requests.h"

namespace dxshim {
namespace {

const std::string kStore =
    "C:\\Windows\\System32\\DriverStore\\FileRepository\\nvgridsw_aws.inf_amd64_5b7ec8f2a8e3b31a";

using test::DecideAndHold;
using test::LoadExampleInventory;
using test::PodCreateRequest;
using test::SyncedLedger;
using test::WindowsTarget;

TEST(Decision, AnnotationsNeverNameAPathThatGetsMounted) {
  // A hostile pod: pins and required files that are paths. Nothing but inventory paths may
  // appear in the rewrite, and here nothing matches at all.
  const auto node = LoadExampleInventory("nvidia-t4.yaml");
  const auto owner = SyncedLedger();
  auto& ledger = *owner;
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"dxshim.io/device", "C:\\Windows\\System32\\config\\SAM"},
           {"dxshim.io/requires", "..\\..\\SAM"},
           {"dxshim.io/vendor", "\\\\evil\\share"}}) {
    try {
      DecideAndHold(PodCreateRequest({{key, value}}), node, ledger, WindowsTarget());
      ADD_FAILURE() << key << " was accepted";
    } catch (const DecisionError& e) {
      EXPECT_TRUE(e.code() == grpc::StatusCode::INVALID_ARGUMENT ||
                  e.code() == grpc::StatusCode::FAILED_PRECONDITION)
          << e.what();
    }
  }
  EXPECT_TRUE(ledger.Usage().empty());
  const auto d =
      DecideAndHold(PodCreateRequest({{"dxshim.io/gpu", "1"}}), node, ledger, WindowsTarget());
  for (const auto& m : d.plan.add_mounts) EXPECT_TRUE(m.host_path().starts_with(kStore));
}

TEST(Decision, CodesAndNamespaces) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");
  devices::AllocationPolicy policy;
  policy.deny_namespaces = {"default"};
  const auto owner = SyncedLedger(policy);
  auto& ledger = *owner;
  const auto code = [&](const runtime::v1::CreateContainerRequest& r) {
    try {
      DecideAndHold(r, node, ledger, WindowsTarget());
    } catch (const DecisionError& e) {
      return e.code();
    }
    return grpc::StatusCode::OK;
  };
  EXPECT_EQ(code(PodCreateRequest({{"dxshim.io/gpu", "1"}})),
            grpc::StatusCode::FAILED_PRECONDITION);
  auto other = PodCreateRequest({{"dxshim.io/gpu", "1"}});
  other.mutable_sandbox_config()->mutable_metadata()->set_namespace_("gpu");
  EXPECT_EQ(code(other), grpc::StatusCode::OK);
  other.set_pod_sandbox_id("sandbox-2");
  EXPECT_EQ(code(other), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(code(PodCreateRequest({{"dxshim.io/gpu", "x"}})), grpc::StatusCode::INVALID_ARGUMENT);
  Ledger unsynced({});
  try {
    DecideAndHold(other, node, unsynced, WindowsTarget());
    ADD_FAILURE();
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE);
  }
  // Scope: a container outside dxshim.io/containers passes through.
  auto scoped = PodCreateRequest({{"dxshim.io/gpu", "1"}, {"dxshim.io/containers", "trainer"}});
  scoped.mutable_sandbox_config()->mutable_metadata()->set_namespace_("gpu");
  EXPECT_TRUE(DecideAndHold(scoped, node, ledger, WindowsTarget()).pass_through);
}

// vm-runtime-handlers: a GPU request in a pod whose handler runs it in a VM is refused before
// anything is held; a device another plugin put in is left as it is, with no runtime files.
TEST(Decision, PodsInVirtualMachinesGetNoGpu) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");
  const auto owner = SyncedLedger();
  auto& ledger = *owner;
  auto target = WindowsTarget();
  target.vm_runtime_handlers = {"runhcs-wcow-hypervisor"};
  const auto request = PodCreateRequest({{"dxshim.io/gpu", "1"}});
  try {
    DecideAndHold(request, node, ledger, target, std::string("runhcs-wcow-hypervisor"));
    ADD_FAILURE() << "a GPU in a Hyper-V pod";
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(e.outcome(), DecisionOutcome::kVmSandbox);
    EXPECT_NE(std::string(e.what()).find("'runhcs-wcow-hypervisor' runs pods in virtual machines"),
              std::string::npos)
        << e.what();
  }
  // The dxshim resource (the device plugin's slots) is a GPU request too.
  auto by_limit = PodCreateRequest({});
  (*by_limit.mutable_config()->mutable_annotations())[keys::kPluginSlotsAnnotation] = "slot-0";
  EXPECT_THROW(DecideAndHold(by_limit, node, ledger, target, std::string("runhcs-wcow-hypervisor")),
               DecisionError);
  // Nothing was held: the same pod under the default handler gets the GPU.
  EXPECT_FALSE(DecideAndHold(request, node, ledger, target, std::string("")).pass_through);
  // Another plugin's device in a VM pod: left alone, and the log says why.
  auto assigned = PodCreateRequest({});
  assigned.set_pod_sandbox_id("sandbox-vm");
  assigned.mutable_config()->add_devices()->set_host_path(
      "vpci-location-path://PCIROOT(0)#PCI(1E00)");
  const auto left =
      DecideAndHold(assigned, node, ledger, target, std::string("runhcs-wcow-hypervisor"));
  EXPECT_TRUE(left.pass_through);
  EXPECT_TRUE(left.notable);
  EXPECT_NE(left.why.find("left as they are"), std::string::npos);
  // A sandbox dxshim has not learned yet: retry once the runtime has listed it.
  try {
    DecideAndHold(request, node, ledger, target, std::nullopt);
    ADD_FAILURE();
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE);
  }
  // Without VM handlers configured (Linux's default) the handler does not matter.
  EXPECT_TRUE(DecideAndHold(PodCreateRequest({}), node, ledger, WindowsTarget(), std::nullopt)
                  .pass_through);
}

// GPU memory: what the memory resource's units (dxshim.io/plugin-memory-units, from kubelet's
// Allocate) and the dxshim.io/gpu-memory annotation reserve, the refusals on memory with their
// gRPC codes and outcomes, and what the container is told (the label the ledger is rebuilt from,
// DXSHIM_GPU_MEMORY_BYTES).

constexpr std::uint64_t kGi = 1ull << 30;

// `count` memory units as kubelet gives them (ids as the plugin names them).
std::string Units(unsigned count) {
  std::string out;
  for (unsigned i = 0; i < count; ++i)
    out += (i ? "," : "") + ("mem-0a1b2c3d-" + std::to_string(i));
  return out;
}

runtime::v1::CreateContainerRequest WithContainerAnnotations(
    runtime::v1::CreateContainerRequest r, const std::map<std::string, std::string>& annotations,
    const std::string& sandbox = "sandbox-1") {
  for (const auto& [k, v] : annotations) (*r.mutable_config()->mutable_annotations())[k] = v;
  r.set_pod_sandbox_id(sandbox);
  return r;
}

std::string EnvOf(const Decision& d, const std::string& name) {
  for (const auto& e : d.plan.add_envs) {
    if (e.key() == name) return e.value();
  }
  return "";
}

DecisionError Refused(const runtime::v1::CreateContainerRequest& r, const devices::Inventory& node,
                      Ledger& ledger) {
  try {
    DecideAndHold(r, node, ledger, WindowsTarget());
  } catch (const DecisionError& e) {
    return e;
  }
  ADD_FAILURE() << "admitted";
  return DecisionError(grpc::StatusCode::OK, DecisionOutcome::kInjected, "");
}

TEST(MemoryDecision, TheAnnotationReservesAndTheContainerIsTold) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");  // 15Gi
  auto policy = devices::AllocationPolicy{};
  policy.max_containers_per_device = 8;
  const auto ledger = SyncedLedger(policy);
  const auto d = DecideAndHold(PodCreateRequest({{"dxshim.io/gpu-memory", "6Gi"}}), node, *ledger,
                               WindowsTarget());
  ASSERT_FALSE(d.pass_through);
  EXPECT_EQ(d.plan.labels.at(keys::kGpuMemoryLabel), std::to_string(6 * kGi));
  EXPECT_EQ(EnvOf(d, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(6 * kGi));
  EXPECT_NE(d.plan.annotations.at(keys::kExplanationAnnotation)
                .find("(reserves 6Gi of 15Gi, 15Gi free and 0/8 pods before)"),
            std::string::npos);
  // The pod's own value is kept.
  auto own = PodCreateRequest({{"dxshim.io/gpu-memory", "6Gi"}});
  own.set_pod_sandbox_id("sandbox-2");
  auto* env = own.mutable_config()->add_envs();
  env->set_key("DXSHIM_GPU_MEMORY_BYTES");
  env->set_value("1");
  EXPECT_EQ(EnvOf(DecideAndHold(own, node, *ledger, WindowsTarget()), "DXSHIM_GPU_MEMORY_BYTES"),
            "");
  // 15Gi - 12Gi: a third 6Gi pod is refused on memory; 16Gi never fits.
  auto third = PodCreateRequest({{"dxshim.io/gpu-memory", "6Gi"}});
  third.set_pod_sandbox_id("sandbox-3");
  auto e = Refused(third, node, *ledger);
  EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(e.outcome(), DecisionOutcome::kMemoryExhausted);
  EXPECT_NE(std::string(e.what()).find("(default/pod 6Gi, default/pod 6Gi), 3Gi free"),
            std::string::npos)
      << e.what();
  e = Refused(WithContainerAnnotations(PodCreateRequest({{"dxshim.io/gpu-memory", "16Gi"}}), {},
                                       "sandbox-4"),
              node, *ledger);
  EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(e.outcome(), DecisionOutcome::kMemoryTooLarge);
  e = Refused(
      WithContainerAnnotations(PodCreateRequest({{"dxshim.io/gpu-memory", "0"}}), {}, "sandbox-5"),
      node, *ledger);
  EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("dxshim.io/gpu-memory"), std::string::npos) << e.what();
}

TEST(MemoryDecision, MemoryUnitsFromTheResourceLimit) {
  const auto node = LoadExampleInventory("hetero-node.yaml");  // T4, T4, AMD
  auto policy = devices::AllocationPolicy{};
  policy.max_containers_per_device = 8;
  const auto ledger = SyncedLedger(policy);
  // No GPU count: one GPU with all of it.
  auto d = DecideAndHold(WithContainerAnnotations(PodCreateRequest({}),
                                                  {{keys::kPluginMemoryUnitsAnnotation, Units(6)}}),
                         node, *ledger, WindowsTarget());
  ASSERT_FALSE(d.pass_through);
  EXPECT_EQ(d.placed.memory, std::vector<std::uint64_t>{6 * kGi});
  // Two GPU slots: spread evenly.
  d = DecideAndHold(WithContainerAnnotations(PodCreateRequest({}),
                                             {{keys::kPluginSlotsAnnotation, "gpu-1-0,gpu-1-1"},
                                              {keys::kPluginMemoryUnitsAnnotation, Units(6)}},
                                             "sandbox-2"),
                    node, *ledger, WindowsTarget());
  EXPECT_EQ(d.placed.memory, (std::vector<std::uint64_t>{3 * kGi, 3 * kGi}));
  // An odd count over two GPUs, a disagreeing annotation, a bad unit id.
  for (const auto& r :
       {WithContainerAnnotations(PodCreateRequest({}),
                                 {{keys::kPluginSlotsAnnotation, "gpu-1-0,gpu-1-1"},
                                  {keys::kPluginMemoryUnitsAnnotation, Units(5)}},
                                 "sandbox-3"),
        WithContainerAnnotations(PodCreateRequest({{"dxshim.io/gpu-memory", "4Gi"}}),
                                 {{keys::kPluginMemoryUnitsAnnotation, Units(6)}}, "sandbox-4"),
        WithContainerAnnotations(PodCreateRequest({}),
                                 {{keys::kPluginMemoryUnitsAnnotation, "mem-1,mem-1"}},
                                 "sandbox-5")}) {
    const auto e = Refused(r, node, *ledger);
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT) << e.what();
    EXPECT_EQ(e.outcome(), DecisionOutcome::kInvalidRequest);
  }
  // The same amount by annotation and by limit agrees.
  d = DecideAndHold(
      WithContainerAnnotations(PodCreateRequest({{"dxshim.io/gpu-memory", "2Gi"}}),
                               {{keys::kPluginMemoryUnitsAnnotation, Units(2)}}, "sandbox-6"),
      node, *ledger, WindowsTarget());
  EXPECT_EQ(d.placed.memory, std::vector<std::uint64_t>{2 * kGi});
}

}  // namespace
}  // namespace dxshim
