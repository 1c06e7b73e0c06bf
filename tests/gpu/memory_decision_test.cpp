// The decision on GPU memory (shim/gpu/container_decision.h): what the memory resource's units
// (dxshim.io/plugin-memory-units, from kubelet's Allocate) and the dxshim.io/gpu-memory
// annotation reserve, the refusals on memory with their gRPC codes and outcomes, and what the
// container is told (the label the ledger is rebuilt from, DXSHIM_GPU_MEMORY_BYTES). The GPUs
// come from the example inventories (no GPU here).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "devices/dxshim_keys.h"
#include "shim/gpu/container_decision.h"
#include "tests/support/gpu_requests.h"

namespace dxshim {
namespace {

using test::LoadExampleInventory;
using test::PodCreateRequest;
using test::SyncedLedger;
using test::WindowsTarget;

constexpr std::uint64_t kGi = 1ull << 30;

// `count` memory units as kubelet gives them (ids as the plugin names them).
std::string Units(unsigned count) {
  std::string out;
  for (unsigned i = 0; i < count; ++i) out += (i ? "," : "") + ("mem-0a1b2c3d-" + std::to_string(i));
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
    Decide(r, node, ledger, WindowsTarget());
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
  const auto d = Decide(PodCreateRequest({{"dxshim.io/gpu-memory", "6Gi"}}), node, *ledger,
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
  EXPECT_EQ(EnvOf(Decide(own, node, *ledger, WindowsTarget()), "DXSHIM_GPU_MEMORY_BYTES"), "");
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
  auto d = Decide(WithContainerAnnotations(PodCreateRequest({}),
                                           {{keys::kPluginMemoryUnitsAnnotation, Units(6)}}),
                  node, *ledger, WindowsTarget());
  ASSERT_FALSE(d.pass_through);
  EXPECT_EQ(d.reservation.memory, std::vector<std::uint64_t>{6 * kGi});
  // Two GPU slots: spread evenly.
  d = Decide(WithContainerAnnotations(PodCreateRequest({}),
                                      {{keys::kPluginSlotsAnnotation, "gpu-1-0,gpu-1-1"},
                                       {keys::kPluginMemoryUnitsAnnotation, Units(6)}},
                                      "sandbox-2"),
             node, *ledger, WindowsTarget());
  EXPECT_EQ(d.reservation.memory, (std::vector<std::uint64_t>{3 * kGi, 3 * kGi}));
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
  d = Decide(WithContainerAnnotations(PodCreateRequest({{"dxshim.io/gpu-memory", "2Gi"}}),
                                      {{keys::kPluginMemoryUnitsAnnotation, Units(2)}},
                                      "sandbox-6"),
             node, *ledger, WindowsTarget());
  EXPECT_EQ(d.reservation.memory, std::vector<std::uint64_t>{2 * kGi});
}

}  // namespace
}  // namespace dxshim
