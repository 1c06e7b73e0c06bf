// The decision on a CreateContainer (shim/gpu/container_decision.h) on the example inventories: no
// annotation makes dxshim mount a path the inventory did not give, each refusal has its gRPC code
// (namespaces, exhaustion, bad input, a ledger not yet read), and pods in VMs get no GPU.
#include "shim/gpu/container_decision.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "shim/base/dxshim_keys.h"
#include "shim/base/utf8_text.h"
#include "shim/runtime_record/runtime_record.h"
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

// A GPU whose facts are not UTF-8 (a broken inventory or driver registration: the node's fault,
// not the pod's) is refused with FAILED_PRECONDITION naming the field and the GPU, before anything
// is held; the same GPU with non-ASCII UTF-8 in its DriverStore folder is given as usual.
TEST(Decision, TextThatIsNotUtf8IsRefusedBeforeAnythingIsHeld) {
  auto node = LoadExampleInventory("nvidia-t4.yaml");
  auto& t4 = node.devices.at(0);
  const std::string utf8_store =
      "C:\\Windows\\System32\\DriverStore\\FileRepository\\nvmiig.inf_amd64_"
      "\xc3\xb1\xe2\x82\xac\xe6\xbc\xa2";  // ñ€漢

  // As a conversion through the ANSI code page (Latin-1) would leave the folder: "ñé".
  t4.driver_store = utf8_store.substr(0, utf8_store.size() - 8) + "\xf1\xe9";
  const auto owner = SyncedLedger();
  auto& ledger = *owner;
  const auto request = PodCreateRequest({{"dxshim.io/gpu", "1"}});
  try {
    DecideAndHold(request, node, ledger, WindowsTarget());
    ADD_FAILURE() << "a DriverStore path that is not UTF-8 was accepted";
  } catch (const DecisionError& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(e.outcome(), DecisionOutcome::kNotUtf8);
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with(
        "dxshim: pod default/pod container app: not creating it with text that is not UTF-8, "
        "which a CRI request must not carry (containerd 2.2 and later refuse it): mount host_path "
        "is not valid UTF-8 (byte 0xF1 at offset 64 of 'C:\\Windows\\System32\\DriverStore\\"
        "FileRepository\\nvmiig.inf_amd64_\\xF1\\xE9\\nvcudadebugger.dll'), from GPU " +
        t4.id +
        "'s runtime file nvcudadebugger.dll => nvcudadebugger.dll in its DriverStore "
        "folder; mount host_path"))
        << message;
    // Two of the 14 mounts named, then how many more.
    EXPECT_TRUE(
        message.ends_with("folder; and 12 more; fix the GPU's entry in the device inventory "
                          "or its driver's registration on this node"))
        << message;
    EXPECT_TRUE(IsValidUtf8(message));
  }
  EXPECT_TRUE(ledger.Usage().empty()) << "nothing is held for a refused container";

  t4.driver_store = utf8_store;
  const auto d = DecideAndHold(request, node, ledger, WindowsTarget());
  ASSERT_FALSE(d.pass_through);
  EXPECT_TRUE(d.plan.not_utf8.empty());
  EXPECT_EQ(d.plan.add_mounts.at(0).host_path(), utf8_store + "\\nvcudadebugger.dll");
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

// A pod's reservation is the distinct memory unit ids of its containers (kubelet's device
// manager reuses an init container's ids for the containers after it, and never an app
// container's), spread over its GPUs; each container is told its own units. Containers are created
// one after another, each committed as serve does when the runtime says it was created.

// Memory unit ids `first` .. `first + count - 1`, as kubelet lists them.
std::string UnitIds(unsigned first, unsigned count) {
  std::string out;
  for (unsigned i = first; i < first + count; ++i)
    out += (out.empty() ? "" : ",") + ("mem-0a1b2c3d-" + std::to_string(i));
  return out;
}

// Container `name` of pod default/pod (sandbox-1) given the memory units `units`, and `pod`
// annotations.
runtime::v1::CreateContainerRequest UnitsRequest(
    const std::string& name, const std::string& units,
    const std::map<std::string, std::string>& pod = {}) {
  auto r = PodCreateRequest(pod);
  r.mutable_config()->mutable_metadata()->set_name(name);
  if (!units.empty()) {
    (*r.mutable_config()->mutable_annotations())[keys::kPluginMemoryUnitsAnnotation] = units;
  }
  return r;
}

// Decided, held and committed (its CreateContainer succeeded).
Decision Create(const runtime::v1::CreateContainerRequest& r, const devices::Inventory& node,
                Ledger& ledger) {
  auto d = Decide(
      r, node, ledger.policy(), [&] { return ledger.View(); }, WindowsTarget());
  if (d.pass_through) return d;
  const auto held = ledger.Hold(d.placed, r.pod_sandbox_id(), PodName(r.sandbox_config()),
                                r.config().metadata().name());
  if (!held) throw std::logic_error("the ledger did not hold a choice made from its own usage");
  ledger.Commit(*held);
  return d;
}

devices::AllocationPolicy EightPods() {
  devices::AllocationPolicy policy;
  policy.max_containers_per_device = 8;
  return policy;
}

// What the pod of sandbox-1 holds on its one GPU, by the ledger (what placement counts) and by
// its metrics (Holdings), which must agree.
std::uint64_t PodMemory(const Ledger& ledger, const devices::Device& gpu) {
  std::optional<std::uint64_t> counted;
  const auto usage = ledger.Usage();
  for (const auto& h : usage.at(gpu.id).holders) {
    if (h.sandbox_id == "sandbox-1") counted = h.memory;
  }
  for (const auto& h : ledger.Holdings()) {
    if (h.pod == "pod") {
      EXPECT_EQ(h.memory.size(), 1u);
      EXPECT_EQ(counted, h.memory.at(0));
      return h.memory.at(0).value_or(0);
    }
  }
  ADD_FAILURE() << "the pod holds nothing";
  return 0;
}

TEST(MemoryUnitsOfAPod, AnInitContainersUnitsAreReusedByTheAppContainer) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");  // 15Gi
  const auto ledger = SyncedLedger(EightPods());
  const auto init = Create(UnitsRequest("init", UnitIds(0, 2)), node, *ledger);
  EXPECT_EQ(EnvOf(init, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(2 * kGi));
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 2 * kGi);
  // Kubelet gives the app container the init container's 2 ids again, and 4 more.
  const auto app = Create(UnitsRequest("app", UnitIds(0, 6)), node, *ledger);
  EXPECT_EQ(EnvOf(app, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(6 * kGi));
  EXPECT_EQ(app.placed.memory, std::vector<std::uint64_t>{6 * kGi});
  EXPECT_EQ(app.plan.labels.at(keys::kGpuMemoryLabel), std::to_string(6 * kGi));
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 6 * kGi);
  EXPECT_EQ(ledger->View().memory_units.at("sandbox-1").size(), 6u);
  EXPECT_NE(app.why.find("its resource limit adds 4 x 1Gi of GPU memory the pod did not hold (6 "
                         "given, 2 held already by the pod's other containers): the pod's "
                         "reservation grows from 2Gi to 6Gi per GPU"),
            std::string::npos)
      << app.why;
}

TEST(MemoryUnitsOfAPod, TwoAppContainersReserveBoth) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");
  const auto ledger = SyncedLedger(EightPods());
  const auto first = Create(UnitsRequest("app", UnitIds(0, 4)), node, *ledger);
  const auto second = Create(UnitsRequest("sidecar", UnitIds(4, 4)), node, *ledger);
  EXPECT_EQ(EnvOf(first, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  EXPECT_EQ(EnvOf(second, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  // Kubelet counted 8 units for the pod: so does dxshim.
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 8 * kGi);
  EXPECT_EQ(second.plan.labels.at(keys::kGpuMemoryLabel), std::to_string(8 * kGi));
  // A container without units of its own is told the pod's reservation.
  const auto plain = Create(UnitsRequest("plain", "", {{"dxshim.io/gpu", "1"}}), node, *ledger);
  EXPECT_EQ(EnvOf(plain, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(8 * kGi));
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 8 * kGi);
}

TEST(MemoryUnitsOfAPod, AnInitContainerAndTwoAppContainers) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");
  const auto ledger = SyncedLedger(EightPods());
  const auto init = Create(UnitsRequest("init", UnitIds(0, 2)), node, *ledger);
  const auto app = Create(UnitsRequest("app", UnitIds(0, 4)), node, *ledger);  // 2 reused
  const auto sidecar = Create(UnitsRequest("sidecar", UnitIds(4, 4)), node, *ledger);
  EXPECT_EQ(EnvOf(init, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(2 * kGi));
  EXPECT_EQ(EnvOf(app, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  EXPECT_EQ(EnvOf(sidecar, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 8 * kGi);
  EXPECT_EQ(app.plan.labels.at(keys::kGpuMemoryLabel), std::to_string(4 * kGi));
  EXPECT_EQ(sidecar.plan.labels.at(keys::kGpuMemoryLabel), std::to_string(8 * kGi));
}

TEST(MemoryUnitsOfAPod, AGrowthThatDoesNotFitIsRefusedAndNothingIsHeld) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");  // 15Gi
  const auto ledger = SyncedLedger(EightPods());
  auto other = PodCreateRequest({{"dxshim.io/gpu-memory", "8Gi"}});
  other.set_pod_sandbox_id("sandbox-other");
  other.mutable_sandbox_config()->mutable_metadata()->set_name("other");
  Create(other, node, *ledger);
  Create(UnitsRequest("app", UnitIds(0, 4)), node, *ledger);  // 12Gi of 15Gi reserved
  const auto& gpu = node.devices[0].id;
  const auto before = ledger->Usage().at(gpu);
  const auto e = Refused(UnitsRequest("sidecar", UnitIds(4, 4)), node, *ledger);
  EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(e.outcome(), DecisionOutcome::kMemoryExhausted);
  EXPECT_EQ(std::string(e.what()),
            "dxshim: pod default/pod container sidecar: its resource limit adds 4 x 1Gi of GPU "
            "memory the pod did not hold (4 given, 0 held already by the pod's other containers), "
            "which would grow the pod's reservation from 4Gi to 8Gi per GPU, more than is free "
            "now on its GPU(s): NVIDIA Tesla T4 [PCIROOT(0)#PCI(1E00)]: 15Gi, 12Gi reserved "
            "(default/other 8Gi, default/pod 4Gi), 3Gi free, 2/8 pods");
  EXPECT_EQ(ledger->Usage().at(gpu).memory, before.memory);
  EXPECT_EQ(ledger->Usage().at(gpu).holders, before.holders);
  EXPECT_EQ(ledger->View().memory_units.at("sandbox-1").size(), 4u);
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 4 * kGi);
  // Units the pod holds already never grow it, whatever is free.
  const auto again = Create(UnitsRequest("app", UnitIds(0, 4)), node, *ledger);
  EXPECT_EQ(EnvOf(again, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  EXPECT_EQ(ledger->Usage().at(gpu).memory, before.memory);
  // 3 more units fit.
  const auto small = Create(UnitsRequest("small", UnitIds(4, 3)), node, *ledger);
  EXPECT_EQ(EnvOf(small, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(3 * kGi));
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 7 * kGi);
}

TEST(MemoryUnitsOfAPod, CountsThatDoNotDivideOverThePodsGpusAndExclusivePods) {
  const auto node = LoadExampleInventory("hetero-node.yaml");  // T4, T4, AMD
  const auto ledger = SyncedLedger(EightPods());
  const std::map<std::string, std::string> two = {{"dxshim.io/gpu", "2"},
                                                  {"dxshim.io/vendor", "nvidia"}};
  const auto app = Create(UnitsRequest("app", UnitIds(0, 4), two), node, *ledger);
  EXPECT_EQ(app.placed.memory, (std::vector<std::uint64_t>{2 * kGi, 2 * kGi}));
  EXPECT_EQ(EnvOf(app, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(2 * kGi));
  // 4 units (2 new) over its 2 GPUs divide; the pod's 6 do too: 3Gi each.
  const auto more = Create(UnitsRequest("more", UnitIds(2, 4), two), node, *ledger);
  EXPECT_EQ(more.placed.memory, (std::vector<std::uint64_t>{3 * kGi, 3 * kGi}));
  EXPECT_EQ(EnvOf(more, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(2 * kGi));
  // 2 units of which 1 is new: the pod's 7 do not divide over 2 GPUs.
  auto e = Refused(UnitsRequest("odd", UnitIds(5, 2), two), node, *ledger);
  EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("7 x 1Gi does not divide evenly over the pod's 2 GPUs"),
            std::string::npos)
      << e.what();
  // A container whose own count does not divide over the pod's GPUs (its limit asked no count).
  e = Refused(UnitsRequest("three", UnitIds(10, 3)), node, *ledger);
  EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("3 x 1Gi of GPU memory, which does not divide evenly over "
                                       "its pod's 2 GPUs"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(ledger->View().memory_units.at("sandbox-1").size(), 6u);

  // An exclusive pod holds its GPU's whole capacity: its containers' units never grow it, and
  // each is told its own.
  const std::map<std::string, std::string> exclusive = {{"dxshim.io/sharing", "exclusive"},
                                                        {"dxshim.io/vendor", "amd"}};
  auto x1 = UnitsRequest("x1", UnitIds(20, 4), exclusive);
  x1.set_pod_sandbox_id("sandbox-x");
  auto x2 = UnitsRequest("x2", UnitIds(24, 4), exclusive);
  x2.set_pod_sandbox_id("sandbox-x");
  const auto first = Create(x1, node, *ledger);
  const auto second = Create(x2, node, *ledger);
  EXPECT_EQ(EnvOf(first, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  EXPECT_EQ(EnvOf(second, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  EXPECT_EQ(second.placed.memory, first.placed.memory);
  EXPECT_EQ(second.placed.memory.at(0), node.devices[2].dedicated_memory);
  EXPECT_EQ(ledger->View().memory_units.at("sandbox-x").size(), 8u);
}

// What the runtime lists after `created` (each the config dxshim sent, created in sandbox-1,
// ready): what a restarted dxshim rebuilds its ledger from.
RuntimeRecord RecordOf(
    const std::vector<std::pair<runtime::v1::CreateContainerRequest, Decision>>& created) {
  runtime::v1::ListPodSandboxResponse sandboxes;
  auto* sandbox = sandboxes.add_items();
  sandbox->set_id("sandbox-1");
  sandbox->set_state(runtime::v1::SANDBOX_READY);
  sandbox->mutable_metadata()->set_name("pod");
  sandbox->mutable_metadata()->set_namespace_("default");
  runtime::v1::ListContainersResponse containers;
  for (const auto& [request, decision] : created) {
    auto config = request.config();
    ApplyPlan(decision.plan, config);
    auto* c = containers.add_containers();
    c->set_id("c-" + config.metadata().name());
    c->set_pod_sandbox_id(request.pod_sandbox_id());
    *c->mutable_metadata() = config.metadata();
    *c->mutable_labels() = config.labels();
    *c->mutable_annotations() = config.annotations();
    // The init container has run to completion.
    c->set_state(config.metadata().name() == "init" ? runtime::v1::CONTAINER_EXITED
                                                    : runtime::v1::CONTAINER_RUNNING);
  }
  return ReadRuntimeRecord(sandboxes, containers);
}

TEST(MemoryUnitsOfAPod, ARestartedDxshimRebuildsTheReservationAndTellsTheSame) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");
  std::vector<std::pair<runtime::v1::CreateContainerRequest, Decision>> created;
  {
    const auto ledger = SyncedLedger(EightPods());
    for (const auto& r : {UnitsRequest("init", UnitIds(0, 2)), UnitsRequest("app", UnitIds(0, 4)),
                          UnitsRequest("sidecar", UnitIds(4, 4))}) {
      created.emplace_back(r, Create(r, node, *ledger));
    }
    EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 8 * kGi);
  }
  // The labels say 2Gi, 4Gi and 8Gi, in creation order: the pod holds the largest.
  const auto record = RecordOf(created);
  const auto ledger = std::make_unique<Ledger>(EightPods());
  ledger->BeginResync();
  ledger->FinishResync(record);
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 8 * kGi);
  EXPECT_EQ(ledger->View().memory_units.at("sandbox-1").size(), 8u);
  // Kubelet re-creates the app container (the same units): the same variables, nothing grows.
  auto again = UnitsRequest("app", UnitIds(0, 4));
  again.mutable_config()->mutable_metadata()->set_attempt(1);
  const auto recreated = Create(again, node, *ledger);
  EXPECT_EQ(recreated.plan.add_envs.size(), created[1].second.plan.add_envs.size());
  for (const auto& e : created[1].second.plan.add_envs) {
    EXPECT_EQ(EnvOf(recreated, e.key()), e.value()) << e.key();
  }
  EXPECT_EQ(EnvOf(recreated, "DXSHIM_GPU_MEMORY_BYTES"), std::to_string(4 * kGi));
  EXPECT_EQ(EnvOf(recreated, "DXSHIM_GPU_MEMORY_TOTAL_BYTES"),
            std::to_string(node.devices[0].dedicated_memory));
  EXPECT_EQ(recreated.plan.labels.at(keys::kGpuMemoryLabel), std::to_string(8 * kGi));
  EXPECT_EQ(PodMemory(*ledger, node.devices[0]), 8 * kGi);
}

TEST(MemoryUnitsOfAPod, EveryContainerGivenGpusIsToldItsGpusTotalMemory) {
  const auto node = LoadExampleInventory("hetero-node.yaml");  // T4 15Gi, T4 15Gi, AMD
  const auto ledger = SyncedLedger(EightPods());
  const std::vector<std::pair<std::map<std::string, std::string>, std::uint64_t>> pods = {
      {{{"dxshim.io/gpu", "1"}}, 15 * kGi},
      {{{"dxshim.io/gpu-memory", "2Gi"}}, 15 * kGi},
      {{{"dxshim.io/sharing", "exclusive"}, {"dxshim.io/vendor", "amd"}}, 8 * kGi},
      {{{"dxshim.io/gpu", "2"}, {"dxshim.io/vendor", "nvidia"}}, 15 * kGi}};
  int n = 0;
  for (const auto& [annotations, total] : pods) {
    auto r = PodCreateRequest(annotations);
    r.set_pod_sandbox_id("sandbox-" + std::to_string(++n));
    const auto d = Create(r, node, *ledger);
    ASSERT_FALSE(d.pass_through);
    EXPECT_EQ(EnvOf(d, "DXSHIM_GPU_MEMORY_TOTAL_BYTES"), std::to_string(total)) << d.why;
  }
}

}  // namespace
}  // namespace dxshim

namespace dxshim {
namespace {

// Memory units of a container whose GPUs another device plugin put into the config: kubelet
// counted them for the pod, and dxshim cannot reserve them on devices it leaves as they are. A
// clear INVALID_ARGUMENT, not a silent pass.
TEST(MemoryUnitsOfAPod, UnitsNextToAnotherPluginsDevicesAreRefused) {
  const auto node = LoadExampleInventory("nvidia-t4.yaml");
  const auto ledger = SyncedLedger(EightPods());
  auto r = UnitsRequest("app", UnitIds(0, 2));
  r.mutable_config()->add_devices()->set_host_path("vpci-location-path://" +
                                                   node.devices[0].location_path);
  const auto e = Refused(r, node, *ledger);
  EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("put into the config by another device plugin"),
            std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace dxshim
