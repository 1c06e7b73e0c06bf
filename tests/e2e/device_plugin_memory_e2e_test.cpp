// dxshim's second device plugin resource, dxshim.io/gpu-memory, through a real containerd and real
// unix sockets: the test kubelet (tests/support/test_kubelet.h; kubelet is the one part stood in
// for) sees dxshim register it next to dxshim.io/gpu, with one device per gpu-memory-unit of each
// GPU's capacity; kubelet's flow with memory limits (Allocate, then CreateContainer carrying the
// answer) fills a GPU exactly, and dxshim admits what was advertised and no more; memory held
// outside the scheduler's count (an annotation pod's dxshim.io/gpu-memory, a default
// reservation) leaves the healthy count at once and comes back when the pod stops. The count is
// what kubelet allocated plus the largest fit on one GPU with a pod slot: checked with the
// default of one pod per GPU, with free memory split over two GPUs, across a kill -9 of dxshim
// with a pod admitted but not started, and against the test kubelet's admission (which decides
// as kubelet v1.26's device manager does) while pods come and go. The GPUs are device nodes the
// test makes (test_gpu.h), 16Gi each.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "tests/support/gpu_node.h"
#include "tests/support/test_kubelet.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr auto kWait = seconds(30);
constexpr const char* kGpu = TestKubelet::kGpu;
constexpr const char* kMemory = TestKubelet::kGpuMemory;

class DevicePluginMemory : public GpuNodeTest {
 protected:
  DevicePluginMemory() : plugin_dir_(dir_ / "device-plugins") {
    std::filesystem::create_directories(plugin_dir_);
  }

  // Resync every 30 s: only serve's notification of a commit or a stopped pod (or the plugin's
  // start) can change the count within the waits below.
  void Start(unsigned max_per_device, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> flags = {"--device-plugin-dir", plugin_dir_, "--resync-interval",
                                      "30s"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    StartDxshim(max_per_device, flags);
  }

  // Waits for the list of `resource` kubelet gets to have `total` devices, `healthy` healthy.
  std::vector<v1beta1::Device> WaitForList(const std::string& resource, std::size_t total,
                                           std::size_t healthy) {
    const auto list = kubelet_->WaitForDevices(
        [&](const std::vector<v1beta1::Device>& d) {
          return d.size() == total && HealthyCount(d) == healthy;
        },
        kWait, resource);
    EXPECT_TRUE(list.has_value()) << "kubelet never got " << total << " device(s) of " << resource
                                  << ", " << healthy << " healthy; dxshim's log:\n"
                                  << Log();
    return list.value_or(std::vector<v1beta1::Device>{});
  }

  // Waits (at most 10 s, a third of the resync interval) until kubelet's memory list has
  // `healthy` healthy units; prints how long that took after `since`.
  void ExpectHealthyWithin10s(std::size_t healthy, Clock::time_point since, const char* what) {
    const auto list = kubelet_->WaitForDevices(
        [&](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == healthy; },
        seconds(10), kMemory);
    const auto took = std::chrono::duration<double, std::milli>(Clock::now() - since).count();
    EXPECT_TRUE(list.has_value()) << what << ": kubelet's memory list never had " << healthy
                                  << " healthy unit(s); dxshim's log:\n"
                                  << Log();
    std::printf("[ measured ] %s: ListAndWatch sent the new memory list %.0f ms after the call\n",
                what, took);
  }

  // Kubelet's flow for a pod whose container has `resources.limits: {dxshim.io/gpu-memory: N}`:
  // admission (Allocate of N units, pod UID "uid-<name>" as RunPod names it), then RunPodSandbox
  // and CreateContainer with the answer.
  grpc::Status RunMemoryPod(const std::string& name, unsigned units, std::string* container,
                            std::vector<std::string>* ids = nullptr) {
    std::map<std::string, std::string> from_plugin;
    auto s = Admit(name, units, &from_plugin, ids);
    if (!s.ok()) return s;
    EXPECT_EQ(from_plugin.count("dxshim.io/plugin-memory-units"), 1u);
    answers_[name] = from_plugin;
    return CreateWith(name, from_plugin, container);
  }

  // Kubelet's admission alone (no sandbox yet) of a one-container pod asking `units`: what
  // kubelet copies into its CRI config, and the units it got.
  grpc::Status Admit(const std::string& name, unsigned units,
                     std::map<std::string, std::string>* annotations = nullptr,
                     std::vector<std::string>* ids = nullptr) {
    TestKubelet::PodAdmission admitted;
    auto s = kubelet_->AdmitPod("uid-" + name, {{"app", false, {{kMemory, units}}}}, &admitted);
    if (s.ok() && annotations) *annotations = admitted.annotations["app"];
    if (s.ok() && ids) *ids = admitted.devices["app"][kMemory];
    return s;
  }

  // Waits for kubelet's memory list to have `healthy` healthy units, and prints it.
  void ExpectCount(std::size_t healthy, const char* when) {
    const auto list = kubelet_->WaitForDevices(
        [&](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == healthy; }, kWait,
        kMemory);
    EXPECT_TRUE(list.has_value()) << when << ": kubelet's memory list never had " << healthy
                                  << " healthy unit(s); dxshim's log:\n"
                                  << Log();
    std::printf("[ count ] %s: %zu healthy memory units\n", when, healthy);
  }

  grpc::Status CreateWith(const std::string& name,
                          const std::map<std::string, std::string>& container_annotations,
                          std::string* container,
                          const std::map<std::string, std::string>& pod_annotations = {}) {
    const auto pod = RunPod(name, false);
    for (const auto& [k, v] : pod_annotations) (*configs_[pod].mutable_annotations())[k] = v;
    auto config = SleepingBusybox("app");
    for (const auto& [k, v] : container_annotations) (*config.mutable_annotations())[k] = v;
    pods_[name] = pod;
    return CreateAndStart(pod, config, container);
  }

  void StopPod(const std::string& name) {
    v1::StopPodSandboxRequest stop;
    stop.set_pod_sandbox_id(pods_[name]);
    v1::StopPodSandboxResponse stopped;
    const auto s = client_->runtime->StopPodSandbox(Deadline(seconds(60)).get(), stop, &stopped);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }

  // The dxshim.io/gpu-memory label of a container: the bytes dxshim reserved on each GPU.
  std::string MemoryOf(const std::string& id) {
    v1::ListContainersRequest list;
    list.mutable_filter()->set_id(id);
    v1::ListContainersResponse listed;
    const auto s = client_->runtime->ListContainers(Deadline(seconds(10)).get(), list, &listed);
    if (!s.ok() || listed.containers_size() != 1) return "";
    const auto& labels = listed.containers(0).labels();
    const auto it = labels.find("dxshim.io/gpu-memory");
    return it == labels.end() ? "" : it->second;
  }

  const std::string plugin_dir_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::map<std::string, std::map<std::string, std::string>> answers_;  // pod -> its Allocate answer
  std::map<std::string, std::string> pods_;
};

std::string Gi(std::uint64_t n) { return std::to_string(n << 30); }

TEST_F(DevicePluginMemory, RegistersBothResourcesWithOneDevicePerUnitOfEachGpusMemory) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(3);
  const auto slots = kubelet_->WaitForRegistration(1, kWait, kGpu);
  const auto memory = kubelet_->WaitForRegistration(1, kWait, kMemory);
  ASSERT_TRUE(slots.has_value() && memory.has_value()) << Log();
  EXPECT_EQ(slots->endpoint(), "dxshim.sock");
  EXPECT_EQ(memory->version(), "v1beta1");
  EXPECT_EQ(memory->endpoint(), "dxshim-memory.sock");
  EXPECT_FALSE(memory->options().pre_start_required());
  EXPECT_TRUE(memory->options().get_preferred_allocation_available());
  EXPECT_TRUE(std::filesystem::is_socket(plugin_dir_ + "/dxshim-memory.sock"));
  WaitForList(kGpu, 6, 6);  // 2 GPUs x 3 pods per GPU
  // 2 GPUs x 16Gi at 1Gi; what one more pod can have on one GPU is healthy: 16.
  const auto units = WaitForList(kMemory, 32, 16);
  std::set<std::string> ids;
  for (const auto& d : units) {
    ids.insert(d.id());
    EXPECT_LE(d.id().size(), 63u) << d.id();
  }
  EXPECT_EQ(ids.size(), 32u) << "device ids must be unique";

  // Allocate answers with the memory annotation; ids it never advertised (a slot's too) are
  // refused.
  v1beta1::AllocateResponse response;
  ASSERT_TRUE(kubelet_->AllocateIds({units[0].id(), units[1].id()}, &response, kMemory).ok());
  ASSERT_EQ(response.container_responses_size(), 1);
  const auto& annotations = response.container_responses(0).annotations();
  ASSERT_EQ(annotations.size(), 1u);
  EXPECT_EQ(annotations.at("dxshim.io/plugin-memory-units"), units[0].id() + "," + units[1].id());
  const auto slot = WaitForList(kGpu, 6, 6)[0].id();
  const auto refused = kubelet_->AllocateIds({slot}, &response, kMemory);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find(slot), std::string::npos) << refused.error_message();

  // Its name and unit are settings, passed to the plugin process.
  ASSERT_EQ(dxshim_->Stop(), 0) << Log();
  EXPECT_FALSE(std::filesystem::exists(plugin_dir_ + "/dxshim-memory.sock"));
  Start(3, {"--device-plugin-memory-resource", "example.com/vram", "--gpu-memory-unit", "2Gi",
            "--gpu-memory-reserved", "1Gi"});
  const auto renamed = kubelet_->WaitForRegistration(1, kWait, "example.com/vram");
  ASSERT_TRUE(renamed.has_value()) << Log();
  EXPECT_EQ(renamed->endpoint(), "dxshim-memory.sock");
  // 2 x (16Gi - 1Gi) / 2Gi, rounded down, listed; one GPU's 7 healthy.
  WaitForList("example.com/vram", 14, 7);
}

// The scheduler's count and dxshim's admission agree, by memory: 6 + 6 + 4 units fill one 16Gi
// GPU through kubelet's flow, kubelet cannot even allocate a third pod of 6, and a pod that reached
// CreateContainer with a unit anyway is refused.
TEST_F(DevicePluginMemory, KubeletsFlowWithMemoryLimitsFillsTheGpuExactly) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(8);
  WaitForList(kMemory, 16, 16);
  std::string first, second, last, id;
  std::vector<std::string> units_of_first;
  auto s = RunMemoryPod("six-1", 6, &first, &units_of_first);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(DevicesOf(first), "0000:e2:00.0");  // a memory limit alone means one GPU
  EXPECT_EQ(MemoryOf(first), Gi(6));
  s = RunMemoryPod("six-2", 6, &second);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(MemoryOf(second), Gi(6));
  // Every unit is kubelet's to count: none is held outside it, so all stay healthy, and kubelet
  // has 4 of them left.
  WaitForList(kMemory, 16, 16);
  std::map<std::string, std::string> none;
  EXPECT_EQ(kubelet_->Allocate(6, &none, nullptr, kMemory).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_FALSE(kubelet_->Allocate(5, &none, nullptr, kMemory).ok());
  s = RunMemoryPod("four", 4, &last);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(MemoryOf(last), Gi(4));
  EXPECT_FALSE(kubelet_->Allocate(1, &none, nullptr, kMemory).ok());
  // A pod that reached CreateContainer all the same (a unit handed out twice) is refused: the GPU
  // has no memory left, though it could take 5 more pods by count.
  const auto over = CreateWith("over", {{"dxshim.io/plugin-memory-units", units_of_first[0]}}, &id);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << over.error_message();
  EXPECT_NE(over.error_message().find("memory"), std::string::npos) << over.error_message();
  // The slot resource did not count these pods: 3 of its 8 slots are held outside its count.
  WaitForList(kGpu, 8, 5);
}

// An annotation pod's dxshim.io/gpu-memory and a shared pod's default reservation (16Gi / 8 = 2Gi)
// leave the healthy count at once (serve tells the plugin of each commit; resync is 30 s away)
// and come back when their sandbox stops; kubelet's flow then fills exactly what is left.
TEST_F(DevicePluginMemory, MemoryHeldOutsideTheCountLeavesItAtOnceAndComesBack) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(8);
  WaitForList(kMemory, 16, 16);
  std::string annotated, by_default, limited, id;
  auto started = Clock::now();
  auto s = CreateWith("annotated", {}, &annotated,
                      {{"dxshim.io/gpu", "1"}, {"dxshim.io/gpu-memory", "6Gi"}});
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  ExpectHealthyWithin10s(10, started, "a 6Gi annotation pod's CreateContainer (+StartContainer)");
  started = Clock::now();
  s = CreateWith("by-default", {}, &by_default, {{"dxshim.io/gpu", "1"}});
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(MemoryOf(by_default), "");  // the default is not recorded: it follows the config
  ExpectHealthyWithin10s(8, started, "a default pod's CreateContainer (+StartContainer)");
  started = Clock::now();
  StopPod("annotated");
  ExpectHealthyWithin10s(14, started, "the annotation pod's StopPodSandbox");
  // What is left is exactly what kubelet's flow can have.
  std::map<std::string, std::string> none;
  EXPECT_FALSE(kubelet_->Allocate(15, &none, nullptr, kMemory).ok());
  std::vector<std::string> units;
  s = RunMemoryPod("fourteen", 14, &limited, &units);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(MemoryOf(limited), Gi(14));
  const auto over = CreateWith("over", {{"dxshim.io/plugin-memory-units", units[0]}}, &id);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << over.error_message();
}

// The defaults: one pod per GPU. Once a memory pod holds the only GPU, nothing more is offered:
// kubelet rejects the next memory pod at admission instead of dxshim at CreateContainer.
TEST_F(DevicePluginMemory, WithOnePodPerGpuAMemoryPodLeavesNothingToOffer) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  ExpectCount(16, "one GPU of 16Gi, one pod per GPU, nothing held");
  std::string six, id;
  auto s = RunMemoryPod("six", 6, &six);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  ExpectCount(6, "a 6-unit pod holds it: its 6 units, and no GPU with a pod slot");
  std::map<std::string, std::string> none;
  const auto refused = kubelet_->Allocate(1, &none, nullptr, kMemory);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  StopPod("six");
  kubelet_->FreePod("uid-six");
  ExpectCount(16, "the pod stopped");
  s = RunMemoryPod("sixteen", 16, &id);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  ExpectCount(16, "a 16-unit pod holds it");
}

// Two 16Gi GPUs, a 10Gi pod on each: 12Gi free on the node, 6 on either GPU. 6 more units are
// offered, kubelet refuses 7 at admission, and the plugin's Allocate refuses 7 units that reach it
// all the same, naming each GPU's free units and pod slots.
TEST_F(DevicePluginMemory, FreeMemorySplitOverGpusOffersTheLargestFit) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(4);
  ExpectCount(16, "two GPUs of 16Gi, nothing held");
  std::string a, b, c;
  std::vector<std::string> ids_a, ids_b;
  auto s = RunMemoryPod("ten-a", 10, &a, &ids_a);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  s = RunMemoryPod("ten-b", 10, &b, &ids_b);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_NE(DevicesOf(a), DevicesOf(b));  // spread
  const auto list = WaitForList(kMemory, 32, 26);
  std::printf(
      "[ count ] a 10-unit pod on each GPU: 20 allocated + 6 (the largest fit) = 26 "
      "healthy; the sum of free units would have offered 12\n");
  std::map<std::string, std::string> none;
  EXPECT_EQ(kubelet_->Allocate(7, &none, nullptr, kMemory).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Seven units kubelet never handed out, straight to the plugin's Allocate.
  std::set<std::string> handed_out(ids_a.begin(), ids_a.end());
  handed_out.insert(ids_b.begin(), ids_b.end());
  std::vector<std::string> seven;
  for (const auto& d : list) {
    if (seven.size() < 7 && !handed_out.count(d.id())) seven.push_back(d.id());
  }
  ASSERT_EQ(seven.size(), 7u);
  v1beta1::AllocateResponse response;
  const auto direct = kubelet_->AllocateIds(seven, &response, kMemory);
  EXPECT_EQ(direct.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(direct.error_message().find("fit on no single GPU"), std::string::npos)
      << direct.error_message();
  EXPECT_NE(direct.error_message().find("6 units free, 3 of 4 pod slots free"), std::string::npos)
      << direct.error_message();
  s = RunMemoryPod("six", 6, &c);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  ExpectCount(32, "and a 6-unit pod: 26 allocated + 6 on the other GPU");
}

// A kill -9 of dxshim (its plugin goes with it) between a pod's admission and its
// CreateContainer: the restarted plugin counts the same, from the record and kubelet's checkpoint,
// and the pods' containers see the same variables.
TEST_F(DevicePluginMemory, AKillNineInTheMiddleChangesNeitherTheCountNorTheVariables) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(4);
  ExpectCount(16, "nothing held");
  std::string a, b;
  auto s = RunMemoryPod("ten-a", 10, &a);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  s = RunMemoryPod("four-b", 4, &b);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  // Admitted, its sandbox made, its image "pulling": no container yet.
  std::map<std::string, std::string> late_units;
  s = Admit("late", 6, &late_units);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const auto late = RunPod("late", false);
  pods_["late"] = late;
  // 20 allocated; late placed on b (12 free, spread) leaves b 6, a 6: the largest fit is 6.
  ExpectCount(26, "10 + 4 held, 6 admitted and not started");
  const auto env = [&](const std::string& id) {
    return Exec(id, "echo $DXSHIM_GPU_MEMORY_BYTES $DXSHIM_GPU_MEMORY_TOTAL_BYTES").stdout_data();
  };
  const auto env_a = env(a);
  const auto env_b = env(b);
  KillDxshim();
  Start(4);
  ASSERT_TRUE(kubelet_->WaitForRegistration(2, kWait, kMemory).has_value()) << Log();
  ExpectCount(26, "after kill -9 and restart");
  EXPECT_EQ(env(a), env_a);
  EXPECT_EQ(env(b), env_b);
  auto config = SleepingBusybox("app");
  for (const auto& [k, v] : late_units) (*config.mutable_annotations())[k] = v;
  std::string late_container;
  s = CreateAndStart(late, config, &late_container);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(DevicesOf(late_container), DevicesOf(b));
  ExpectCount(26, "the admitted pod started where it was counted");
  // A container of ten-a made again (a crash loop) is told the same.
  auto restarted = SleepingBusybox("app");
  restarted.mutable_metadata()->set_attempt(1);
  for (const auto& [k, v] : answers_["ten-a"]) (*restarted.mutable_annotations())[k] = v;
  std::string again;
  s = CreateAndStart(pods_["ten-a"], restarted, &again);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(env(again), env_a);
  ExpectCount(26, "and a container of a held pod made again");
}

// A pod with an init container of 2 units and two app containers of 4, admitted by the test
// kubelet as kubelet v1.26 does (the first app container reuses the init container's 2): the pod
// reserves its 8 distinct units, each container is told its own amount, and the count says 8
// allocated + 8 free on the GPU.
TEST_F(DevicePluginMemory, InitAndAppContainersEachCountAsKubeletAllocatedThem) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(4);
  ExpectCount(16, "nothing held");
  TestKubelet::PodAdmission admitted;
  auto s = kubelet_->AdmitPod("uid-multi",
                              {{"init", true, {{kMemory, 2}}},
                               {"app-1", false, {{kMemory, 4}}},
                               {"app-2", false, {{kMemory, 4}}}},
                              &admitted);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::set<std::string> distinct;
  for (const auto& [container, by_resource] : admitted.devices) {
    for (const auto& id : by_resource.at(kMemory)) distinct.insert(id);
  }
  EXPECT_EQ(distinct.size(), 8u) << "kubelet reuses the init container's units";
  const auto pod = RunPod("multi", false);
  pods_["multi"] = pod;
  std::map<std::string, std::string> ids;
  for (const char* name : {"init", "app-1", "app-2"}) {
    auto config = SleepingBusybox(name);
    for (const auto& [k, v] : admitted.annotations[name]) (*config.mutable_annotations())[k] = v;
    s = CreateAndStart(pod, config, &ids[name]);
    ASSERT_TRUE(s.ok()) << name << ": " << s.error_message() << "\n" << Log();
  }
  const auto told = [&](const std::string& name) {
    return Exec(ids[name], "echo $DXSHIM_GPU_MEMORY_BYTES $DXSHIM_GPU_MEMORY_TOTAL_BYTES")
        .stdout_data();
  };
  EXPECT_EQ(told("init"), Gi(2) + " " + Gi(16) + "\n");
  EXPECT_EQ(told("app-1"), Gi(4) + " " + Gi(16) + "\n");
  EXPECT_EQ(told("app-2"), Gi(4) + " " + Gi(16) + "\n");
  EXPECT_EQ(MemoryOf(ids["app-2"]), Gi(8));
  ExpectCount(16, "the pod holds 8: 8 allocated + 8 free");
  std::map<std::string, std::string> none;
  EXPECT_FALSE(kubelet_->Allocate(9, &none, nullptr, kMemory).ok());
  std::string eight;
  s = RunMemoryPod("eight", 8, &eight);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(MemoryOf(eight), Gi(8));
}

// Pods of 1 to 8 units come and go on two 16Gi GPUs (4 pods per GPU) through the test kubelet,
// which decides as kubelet v1.26's device manager does (healthy less allocated, random pick
// order, GetPreferredAllocation). Before each pod the count must be what the test works out on
// its own (units the running pods hold + the most free on one GPU with a pod slot); every pod
// kubelet admits, dxshim admits too (no late refusal); every pod kubelet rejects had no GPU
// with room for it.
TEST_F(DevicePluginMemory, WhatKubeletAdmitsDxshimAdmitsWhilePodsComeAndGo) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(4);
  struct Running {
    std::string gpu;
    unsigned units = 0;
  };
  std::map<std::string, Running> running;
  // Per GPU (by its dxshim.io/devices label; a GPU no pod has used yet is not listed): units and
  // pods held.
  const auto per_gpu = [&] {
    std::map<std::string, std::pair<unsigned, unsigned>> use;
    for (const auto& [name, r] : running) {
      use[r.gpu].first += r.units;
      ++use[r.gpu].second;
    }
    return use;
  };
  const auto largest_fit = [&] {
    const auto use = per_gpu();
    unsigned best = use.size() < 2 ? 16u : 0u;  // an unused GPU
    for (const auto& [gpu, u] : use) {
      if (u.second < 4) best = std::max(best, 16u - u.first);
    }
    return best;
  };
  std::mt19937 random(50);
  int admitted = 0;
  int rejected = 0;
  for (int i = 0; i < 14; ++i) {
    if (!running.empty() && random() % 3 == 0) {
      auto it = running.begin();
      std::advance(it, static_cast<long>(random() % running.size()));
      StopPod(it->first);
      kubelet_->FreePod("uid-" + it->first);
      running.erase(it);
    }
    unsigned held = 0;
    for (const auto& [name, r] : running) held += r.units;
    const auto fit = largest_fit();
    ExpectCount(held + fit, ("before pod " + std::to_string(i) + ": " + std::to_string(held) +
                             " held + largest fit " + std::to_string(fit))
                                .c_str());
    // Kubelet's own free count (healthy less allocated) is that largest fit too: a unit it
    // allocated marked Unhealthy would leave it larger.
    EXPECT_EQ(kubelet_->Available(kMemory), fit) << "before pod " << i;
    const unsigned units = 1 + static_cast<unsigned>(random() % 8);
    const auto name = "p" + std::to_string(i);
    std::map<std::string, std::string> answer;
    const auto s = Admit(name, units, &answer);
    if (!s.ok()) {
      ++rejected;
      EXPECT_GT(units, fit) << "kubelet rejected a pod of " << units
                            << " that fits: " << s.error_message();
      continue;
    }
    ++admitted;
    EXPECT_LE(units, fit);
    std::string container;
    const auto created = CreateWith(name, answer, &container);
    ASSERT_TRUE(created.ok()) << "late refusal of a pod of " << units
                              << " kubelet admitted: " << created.error_message() << "\n"
                              << Log();
    running[name] = {DevicesOf(container), units};
  }
  std::printf(
      "[ measured ] 14 pods of 1-8 units coming and going: %d admitted by kubelet and "
      "dxshim, %d rejected at kubelet's admission, 0 refused late\n",
      admitted, rejected);
}

}  // namespace
}  // namespace dxshim::test
