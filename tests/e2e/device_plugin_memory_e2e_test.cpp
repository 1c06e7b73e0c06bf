// dxshim's second device plugin resource, dxshim.io/gpu-memory, through a real containerd and real
// unix sockets: the test kubelet (tests/support/test_kubelet.h; kubelet is the one part stood in
// for) sees dxshim register it next to dxshim.io/gpu, with one device per gpu-memory-unit of each
// GPU's capacity; kubelet's flow with memory limits (Allocate, then CreateContainer carrying the
// answer) fills a GPU exactly, and dxshim admits what was advertised and no more; memory held
// outside the scheduler's count (an annotation pod's dxshim.io/gpu-memory, a default
// reservation) leaves the healthy count at once and comes back when the pod stops. The GPUs are
// device nodes the test makes (test_gpu.h), 16Gi each.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

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
  // admission (Allocate of N units), then RunPodSandbox and CreateContainer with the answer.
  grpc::Status RunMemoryPod(const std::string& name, unsigned units, std::string* container,
                            std::vector<std::string>* ids = nullptr) {
    std::map<std::string, std::string> from_plugin;
    const auto admitted = kubelet_->Allocate(units, &from_plugin, ids, kMemory);
    if (!admitted.ok()) return admitted;
    EXPECT_EQ(from_plugin.count("dxshim.io/plugin-memory-units"), 1u);
    return CreateWith(name, from_plugin, container);
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
  EXPECT_FALSE(memory->options().get_preferred_allocation_available());
  EXPECT_TRUE(std::filesystem::is_socket(plugin_dir_ + "/dxshim-memory.sock"));
  WaitForList(kGpu, 6, 6);                          // 2 GPUs x 3 pods per GPU
  const auto units = WaitForList(kMemory, 32, 32);  // 2 GPUs x 16Gi at 1Gi
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
  WaitForList("example.com/vram", 14, 14);  // 2 x (16Gi - 1Gi) / 2Gi, rounded down
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

}  // namespace
}  // namespace dxshim::test
