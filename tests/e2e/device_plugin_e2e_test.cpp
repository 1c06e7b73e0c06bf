// dxshim as kubelet's device plugin, through a real containerd and real unix sockets: a test
// kubelet (tests/support/test_kubelet.h; kubelet is the one part stood in for) sees dxshim
// register dxshim.io/gpu, advertise one device per pod slot and follow the inventory file, and
// allocates as the device manager does; the containers it then creates through dxshim (CRI
// config carrying what Allocate returned, as kubelet sends it) get their GPU, and what dxshim
// admits is exactly what it advertised. Kubelet and dxshim restarts lead to a new registration
// and lose nothing held. The GPUs are device nodes the test makes (see test_gpu.h).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/gpu_node.h"
#include "tests/support/test_kubelet.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

constexpr auto kWait = seconds(30);
using Clock = std::chrono::steady_clock;

// The processes that run as the device plugin of dxshim `serve_pid` (--parent-pid).
std::vector<pid_t> PluginPidsOf(pid_t serve_pid) {
  const std::string wanted = std::string("--parent-pid") + '\0' + std::to_string(serve_pid) + '\0';
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    if (cmdline.find(wanted) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}
int PluginProcessesOf(pid_t serve_pid) { return static_cast<int>(PluginPidsOf(serve_pid).size()); }

class DevicePlugin : public GpuNodeTest {
 protected:
  DevicePlugin() : plugin_dir_(dir_ / "device-plugins") {
    std::filesystem::create_directories(plugin_dir_);
  }

  void Start(unsigned max_per_device) {
    StartDxshim(max_per_device, {"--device-plugin-dir", plugin_dir_, "--device-refresh", "200ms",
                                 "--resync-interval", "1s"});
  }

  // Waits for the list kubelet gets to have `total` devices, `healthy` of them healthy.
  std::vector<v1beta1::Device> WaitForList(std::size_t total, std::size_t healthy) {
    const auto list = kubelet_->WaitForDevices(
        [&](const std::vector<v1beta1::Device>& d) {
          return d.size() == total && HealthyCount(d) == healthy;
        },
        kWait);
    EXPECT_TRUE(list.has_value()) << "kubelet never got " << total << " device(s), " << healthy
                                  << " healthy; dxshim's log:\n"
                                  << Log();
    return list.value_or(std::vector<v1beta1::Device>{});
  }

  // Kubelet's flow for a pod whose container asks for `count` dxshim.io/gpu: admission
  // (Allocate), then RunPodSandbox and CreateContainer with the response's annotations.
  grpc::Status RunGpuPod(const std::string& name, unsigned count, std::string* container,
                         std::vector<std::string>* slots = nullptr,
                         const std::map<std::string, std::string>& pod_annotations = {}) {
    std::map<std::string, std::string> from_plugin;
    const auto admitted = kubelet_->Allocate(count, &from_plugin, slots);
    if (!admitted.ok()) return admitted;
    return CreateWith(name, from_plugin, container, pod_annotations);
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

  // Waits (at most 10 s: a third of the resync interval these tests set, so that only serve's
  // notification or the plugin's start can be what changed the list) until kubelet's list has
  // `healthy` healthy slots; prints how long that took after `since`.
  void ExpectHealthyWithin10s(std::size_t healthy, Clock::time_point since, const char* what) {
    const auto list = kubelet_->WaitForDevices(
        [&](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == healthy; },
        seconds(10));
    const auto took = std::chrono::duration<double, std::milli>(Clock::now() - since).count();
    EXPECT_TRUE(list.has_value()) << what << ": kubelet's list never had " << healthy
                                  << " healthy slot(s); dxshim's log:\n"
                                  << Log();
    std::printf("[ measured ] %s: ListAndWatch sent the new list %.0f ms after the call\n", what,
                took);
  }
  // The first list kubelet gets after `lists_before` lists: what a new registration starts with.
  std::vector<v1beta1::Device> NextList(std::size_t lists_before) {
    EXPECT_TRUE(WaitFor([&] { return kubelet_->lists_received() > lists_before; }, kWait)) << Log();
    return kubelet_
        ->WaitForDevices([](const std::vector<v1beta1::Device>&) { return true; }, seconds(1))
        .value_or(std::vector<v1beta1::Device>{});
  }

  const std::string plugin_dir_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::map<std::string, std::string> pods_;
};

TEST_F(DevicePlugin, RegistersItsResourceAndAdvertisesOneDevicePerPodSlot) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(3);
  const auto request = kubelet_->WaitForRegistration(1, kWait);
  ASSERT_TRUE(request.has_value()) << Log();
  EXPECT_EQ(request->version(), "v1beta1");
  EXPECT_EQ(request->resource_name(), "dxshim.io/gpu");
  EXPECT_EQ(request->endpoint(), "dxshim.sock");
  EXPECT_FALSE(request->options().pre_start_required());
  EXPECT_FALSE(request->options().get_preferred_allocation_available());
  EXPECT_TRUE(std::filesystem::is_socket(plugin_dir_ + "/dxshim.sock"));
  const auto list = WaitForList(6, 6);  // 2 GPUs x 3 pods per GPU
  std::set<std::string> ids;
  for (const auto& d : list) {
    ids.insert(d.id());
    EXPECT_LE(d.id().size(), 63u) << d.id();
  }
  EXPECT_EQ(ids.size(), 6u) << "device ids must be unique";

  grpc::ClientContext context;
  v1beta1::DevicePluginOptions options;
  ASSERT_TRUE(kubelet_->PluginStub()->GetDevicePluginOptions(&context, {}, &options).ok());
  EXPECT_FALSE(options.pre_start_required());
}

TEST_F(DevicePlugin, ListAndWatchFollowsTheInventoryAndMarksAVanishedGpuUnhealthy) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(2);
  const auto before = WaitForList(4, 4);
  WriteInventory(1);  // the second GPU is gone (unplugged, or its driver failed)
  const auto after = WaitForList(4, 2);
  // The same ids: kubelet keeps its allocations and lowers the allocatable count.
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].id(), after[i].id());
  WriteInventory(2);  // back
  WaitForList(4, 4);
}

TEST_F(DevicePlugin, AllocateAnswersWithTheSlotsAnnotationAndRefusesUnknownDevices) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(2);
  const auto list = WaitForList(2, 2);
  v1beta1::AllocateResponse response;
  ASSERT_TRUE(kubelet_->AllocateIds({list[0].id(), list[1].id()}, &response).ok());
  ASSERT_EQ(response.container_responses_size(), 1);
  const auto& annotations = response.container_responses(0).annotations();
  ASSERT_EQ(annotations.count("dxshim.io/plugin-slots"), 1u);
  EXPECT_EQ(annotations.at("dxshim.io/plugin-slots"), list[0].id() + "," + list[1].id());
  EXPECT_TRUE(response.container_responses(0).mounts().empty());
  EXPECT_TRUE(response.container_responses(0).devices().empty());

  const auto refused = kubelet_->AllocateIds({"gpu-00000000-9"}, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("gpu-00000000-9"), std::string::npos);
}

// The scheduler's count and dxshim's admission agree: every advertised slot can be had by a pod
// through kubelet's flow, and no pod gets a GPU beyond them.
TEST_F(DevicePlugin, TheAdvertisedCountIsExactlyWhatDxshimAdmits) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(2);
  const auto advertised = HealthyCount(WaitForList(4, 4));
  std::map<std::string, int> per_gpu;
  std::vector<std::string> slots_of_first;
  for (std::size_t i = 0; i < advertised; ++i) {
    std::string id;
    const auto name = "gpu-" + std::to_string(i);
    const auto s = RunGpuPod(name, 1, &id, i == 0 ? &slots_of_first : nullptr);
    ASSERT_TRUE(s.ok()) << name << ": " << s.error_message() << "\n" << Log();
    const auto gpu = DevicesOf(id);
    ++per_gpu[gpu];
    const auto out = Exec(id, "cat /usr/lib/dxshim/libdxgpu.so");
    EXPECT_EQ(out.stdout_data(), "dxshim e2e runtime file\n") << name;
  }
  EXPECT_EQ(per_gpu.size(), 2u);
  for (const auto& [gpu, pods] : per_gpu) EXPECT_EQ(pods, 2) << gpu;

  // Kubelet has nothing left to give...
  std::map<std::string, std::string> none;
  EXPECT_FALSE(kubelet_->Allocate(1, &none).ok());
  // ...and a pod that reached CreateContainer all the same (a slot handed out twice) is refused.
  std::string id;
  const auto over = CreateWith("over", {{"dxshim.io/plugin-slots", slots_of_first[0]}}, &id);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << over.error_message();
}

// Pods the scheduler does not count (annotation only; exclusive, which takes all of its GPU's
// slots) lower the healthy count by what they hold, so that kubelet still admits exactly what
// dxshim will: nothing more once every slot is used, one more as soon as one is freed.
TEST_F(DevicePlugin, PodsTheSchedulerDoesNotCountTakeTheirSlotsOutOfTheCount) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(2);
  WaitForList(4, 4);
  std::string a, b, c, id;
  ASSERT_TRUE(CreateWith("by-annotation", {}, &a, {{"dxshim.io/gpu", "1"}}).ok()) << Log();
  WaitForList(4, 3);
  ASSERT_TRUE(
      CreateWith("exclusive", {}, &b, {{"dxshim.io/gpu", "1"}, {"dxshim.io/sharing", "exclusive"}})
          .ok())
      << Log();
  WaitForList(4, 1);  // 1 + 2 of the 4 slots taken outside the scheduler's count
  std::vector<std::string> slots;
  ASSERT_TRUE(RunGpuPod("by-limit", 1, &c, &slots).ok()) << Log();
  EXPECT_EQ(DevicesOf(c), DevicesOf(a));  // the only GPU with room
  // Full: kubelet has no slot left, and dxshim refuses a pod that got one anyway.
  std::map<std::string, std::string> none;
  EXPECT_FALSE(kubelet_->Allocate(1, &none).ok());
  const auto over = CreateWith("over", {{"dxshim.io/plugin-slots", slots[0]}}, &id);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << over.error_message();
  // The annotation pod goes: its slot comes back.
  v1::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(pods_["by-annotation"]);
  v1::StopPodSandboxResponse stopped;
  ASSERT_TRUE(client_->runtime->StopPodSandbox(Deadline(seconds(60)).get(), stop, &stopped).ok());
  WaitForList(4, 2);
  ASSERT_TRUE(RunGpuPod("next", 1, &id).ok()) << Log();
  EXPECT_EQ(DevicesOf(id), DevicesOf(c));
}

TEST_F(DevicePlugin, AResourcePodIsRefinedByItsAnnotationsAndKeepsItsGpuAcrossRestarts) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  WriteInventory(2);
  Start(1);
  WaitForList(2, 2);
  // Two GPUs by the resource limit, pinned by annotation to the second test GPU only: refused,
  // naming why (the annotations refine which GPUs; they cannot add any).
  std::string id;
  std::vector<std::string> slots;
  auto s = RunGpuPod("pinned", 2, &id, &slots, {{"dxshim.io/device", "0000:e2:00.1"}});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  kubelet_->Free(slots);  // the pod is deleted
  // An annotation count that disagrees with the limit is an error naming both.
  s = RunGpuPod("disagree", 1, &id, &slots, {{"dxshim.io/gpu", "2"}});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("resource limit gave it 1"), std::string::npos)
      << s.error_message();
  kubelet_->Free(slots);
  // One GPU by the limit, refined by annotation to the second GPU.
  std::map<std::string, std::string> from_plugin;
  ASSERT_TRUE(kubelet_->Allocate(1, &from_plugin).ok());
  s = CreateWith("refined", from_plugin, &id, {{"dxshim.io/device", "0000:e2:00.1"}});
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << Log();
  EXPECT_EQ(DevicesOf(id), "0000:e2:00.1");
  // The container restarts (kubelet reuses the allocation it checkpointed): the same GPU.
  auto again = SleepingBusybox("app");
  again.mutable_metadata()->set_attempt(1);
  for (const auto& [k, v] : from_plugin) (*again.mutable_annotations())[k] = v;
  std::string second;
  ASSERT_TRUE(CreateAndStart(pods_["refined"], again, &second).ok()) << Log();
  EXPECT_EQ(DevicesOf(second), "0000:e2:00.1");
}

TEST_F(DevicePlugin, RegistersAgainWhenKubeletRestarts) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  ASSERT_TRUE(kubelet_->WaitForRegistration(1, kWait)) << Log();
  WaitForList(1, 1);
  kubelet_->Restart();  // removes dxshim.sock and serves a new kubelet.sock
  const auto again = kubelet_->WaitForRegistration(2, kWait);
  ASSERT_TRUE(again.has_value()) << "no registration after kubelet restarted; log:\n" << Log();
  EXPECT_EQ(again->resource_name(), "dxshim.io/gpu");
  EXPECT_TRUE(std::filesystem::is_socket(plugin_dir_ + "/dxshim.sock"));
  WaitForList(1, 1);  // kubelet's new ListAndWatch stream works
  EXPECT_NE(Log().find("registering again"), std::string::npos);
}

// The end of the ListAndWatch stream of its registration alone (kubelet.sock is the same file,
// the plugin's socket is still there) is enough for dxshim to register again at once.
TEST_F(DevicePlugin, RegistersAgainWhenKubeletsStreamEndsThoughNoFileChanged) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  ASSERT_TRUE(kubelet_->WaitForRegistration(1, kWait)) << Log();
  WaitForList(1, 1);
  for (std::size_t drop = 1; drop <= 3; ++drop) {
    kubelet_->DropPlugin();
    ASSERT_TRUE(kubelet_->WaitForRegistration(drop + 1, kWait))
        << "no registration after the stream ended; log:\n"
        << Log();
    WaitForList(1, 1);
  }
  EXPECT_NE(Log().find("the ListAndWatch stream of its registration ended"), std::string::npos)
      << Log();
  // And no more: the streams kubelet replaces when it takes a registration never bring another.
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(kubelet_->registrations(), 4u) << Log();
}

// A stream that ends after a newer registration was taken is an earlier kubelet's (or one kubelet
// replaced when it took the registration): it brings no registration, or each registration would
// end a stream and bring the next. Here a second kubelet takes over kubelet.sock while the first
// still holds its stream, then the first goes away.
TEST_F(DevicePlugin, AnEarlierKubeletsStreamEndingBringsNoRegistration) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  ASSERT_TRUE(kubelet_->WaitForRegistration(1, kWait)) << Log();
  WaitForList(1, 1);
  // The first kubelet's file goes, and a while later (the kernel's timestamps are coarse, and the
  // inode may come back) the second's is a new kubelet.sock.
  std::filesystem::remove(plugin_dir_ + "/kubelet.sock");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  TestKubelet second(plugin_dir_);
  ASSERT_TRUE(second.WaitForRegistration(1, kWait)) << Log();
  ASSERT_TRUE(second.WaitForDevices(
      [](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == 1; }, kWait));
  kubelet_->DropPlugin();  // the first kubelet's stream ends
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(second.registrations(), 1u) << Log();
}

// A kubelet that restarts at once and leaves the plugin's socket where it was: kubelet.sock may
// come back with the inode it had, so only the end of kubelet's ListAndWatch stream (its
// connection closes when it stops) or the socket's creation time says a new kubelet listens.
// Eight restarts back to back, each as soon as the previous one was registered with.
TEST_F(DevicePlugin, EightBackToBackRestartsAreEachAnsweredWithARegistration) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  ASSERT_TRUE(kubelet_->WaitForRegistration(1, kWait)) << Log();
  for (std::size_t restart = 1; restart <= 8; ++restart) {
    kubelet_->Restart(TestKubelet::PluginSockets::kKept);
    ASSERT_TRUE(kubelet_->WaitForRegistrationSinceStart(kWait))
        << "restart " << restart << " was never registered with; log:\n"
        << Log();
  }
  WaitForList(1, 1);  // the last kubelet's stream works
  // A kubelet that restarts while a registration is on its way may get one more (the file
  // changed under the call), never a storm.
  EXPECT_LE(kubelet_->registrations(), 18u) << Log();
  PrintRestartSigns(Log(), *kubelet_);
}

// Serve killed at any moment, even while its plugin process is still starting, leaves no plugin
// process behind (one would keep registering with kubelet against the next serve's).
TEST_F(DevicePlugin, ItsProcessNeverOutlivesServe) {
  std::vector<pid_t> killed;
  for (int i = 0; i < 5; ++i) {
    // No resync for an hour: the plugin's process writes no log line that would end it by
    // SIGPIPE once serve's end of its log pipe is gone; only the parent-death signal can.
    StartDxshim(1, {"--device-plugin-dir", plugin_dir_, "--resync-interval", "60m"});
    killed.push_back(dxshim_->process().pid());
    if (i % 2 == 1) {  // every other time once it has settled (and gone quiet), else at once
      ASSERT_TRUE(
          WaitFor([&] { return Log().find("waiting for kubelet") != std::string::npos; }, kWait))
          << Log();
    }
    KillDxshim();
  }
  for (const auto pid : killed) {
    EXPECT_TRUE(WaitFor([&] { return PluginProcessesOf(pid) == 0; }, kWait))
        << "serve " << pid << " left its device plugin process behind";
  }
}

TEST_F(DevicePlugin, WaitsForKubeletAndServesNothingBeforeIt) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_, /*start=*/false);
  Start(1);
  ASSERT_TRUE(
      WaitFor([&] { return Log().find("waiting for kubelet") != std::string::npos; }, kWait))
      << Log();
  EXPECT_FALSE(std::filesystem::exists(plugin_dir_ + "/dxshim.sock"));
  kubelet_->Start();
  ASSERT_TRUE(kubelet_->WaitForRegistration(1, kWait)) << Log();
  WaitForList(1, 1);
}

TEST_F(DevicePlugin, ADxshimRestartRegistersAgainAndKeepsWhatPodsHold) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);
  WaitForList(1, 1);
  std::string first;
  std::vector<std::string> slots;
  ASSERT_TRUE(RunGpuPod("holder", 1, &first, &slots).ok()) << Log();
  const auto killed = dxshim_->process().pid();
  EXPECT_EQ(PluginProcessesOf(killed), 1);
  KillDxshim();
  // The plugin's process goes with serve, even killed by SIGKILL.
  EXPECT_TRUE(WaitFor([&] { return PluginProcessesOf(killed) == 0; }, kWait));
  Start(1);
  ASSERT_TRUE(kubelet_->WaitForRegistration(2, kWait)) << Log();
  WaitForList(1, 1);
  // The ledger came back from containerd: the slot's GPU is still held.
  std::string id;
  const auto over = CreateWith("over", {{"dxshim.io/plugin-slots", slots[0]}}, &id);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << over.error_message();
  // Stopping dxshim removes its socket: kubelet sees the plugin gone.
  ASSERT_EQ(dxshim_->Stop(), 0);
  EXPECT_FALSE(std::filesystem::exists(plugin_dir_ + "/dxshim.sock"));
}

// serve tells its plugin process of every commit and stopped pod at once: with a resync every
// 30 s, the slot an annotation pod takes and gives back shows in ListAndWatch within a second
// (the waits allow 10 s, well short of any resync), and a pod with the resource limit then gets
// through Allocate and CreateContainer.
TEST_F(DevicePlugin, TheCountFollowsEachCommitAndStoppedPodAtOnce) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  StartDxshim(1, {"--device-plugin-dir", plugin_dir_, "--resync-interval", "30s"});
  WaitForList(1, 1);
  const auto by_annotation = RunPod("by-annotation", true);
  std::string id;
  const auto create_started = Clock::now();
  ASSERT_TRUE(CreateAndStart(by_annotation, &id).ok()) << Log();
  ExpectHealthyWithin10s(0, create_started, "annotation pod's CreateContainer (+StartContainer)");
  const auto stop_started = Clock::now();
  v1::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(by_annotation);
  v1::StopPodSandboxResponse stopped;
  ASSERT_TRUE(client_->runtime->StopPodSandbox(Deadline(seconds(60)).get(), stop, &stopped).ok());
  ExpectHealthyWithin10s(1, stop_started, "its StopPodSandbox");
  std::string limited;
  EXPECT_TRUE(RunGpuPod("by-limit", 1, &limited).ok()) << Log();
}

// A hold on a GPU this node does not have (a replaced GPU, another inventory, labels another
// tool wrote) takes no slot; one on this node's GPU does, at the next resync (both sandboxes
// are made directly in containerd: dxshim never sees them).
TEST_F(DevicePlugin, OnlyHoldsOnThisNodesGpusTakeSlots) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  Start(1);  // a resync every second
  WaitForList(1, 1);
  CriClient direct(containerd_.socket());
  const auto hold = [&](const std::string& name, const std::string& gpu) {
    const auto pod = RunPod(name, false, "", &direct);
    auto config = SleepingBusybox("app");
    (*config.mutable_labels())["dxshim.io/devices"] = gpu;
    (*config.mutable_labels())["dxshim.io/sharing"] = "shared";
    std::string id;
    EXPECT_TRUE(direct.CreateAndStart(pod, configs_[pod], config, &id).ok());
    return pod;
  };
  hold("elsewhere", "0000:ff:00.0");
  const auto here = hold("here", "0000:e2:00.0");
  WaitForList(1, 0);
  direct.RemovePod(here);
  WaitForList(1, 1);  // the hold on 0000:ff:00.0, still there, takes nothing
}

// The plugin process killed alone, then serve killed and started alone: each new registration
// starts with the right count (the plugin reads the runtime's record before it serves).
TEST_F(DevicePlugin, TheCountIsRightAgainWhenEitherProcessRestarts) {
  kubelet_ = std::make_unique<TestKubelet>(plugin_dir_);
  const std::vector<std::string> flags = {"--device-plugin-dir", plugin_dir_, "--resync-interval",
                                          "30s"};
  StartDxshim(2, flags);
  WaitForList(2, 2);
  std::string id;
  ASSERT_TRUE(CreateAndStart(RunPod("by-annotation", true), &id).ok()) << Log();
  WaitForList(2, 1);

  auto lists = kubelet_->lists_received();
  const auto children = PluginPidsOf(dxshim_->process().pid());
  ASSERT_EQ(children.size(), 1u);
  ASSERT_EQ(::kill(children[0], SIGKILL), 0);
  ASSERT_TRUE(kubelet_->WaitForRegistration(2, kWait)) << Log();
  EXPECT_EQ(HealthyCount(NextList(lists)), 1u) << "the restarted plugin's first list";

  lists = kubelet_->lists_received();
  KillDxshim();
  StartDxshim(2, flags);
  ASSERT_TRUE(kubelet_->WaitForRegistration(3, kWait)) << Log();
  EXPECT_EQ(HealthyCount(NextList(lists)), 1u) << "the new serve's plugin's first list";
  // And it follows the next change at once.
  std::string second;
  const auto second_pod = RunPod("second", true);
  const auto create_started = Clock::now();
  ASSERT_TRUE(CreateAndStart(second_pod, &second).ok()) << Log();
  ExpectHealthyWithin10s(0, create_started, "after both restarts, a CreateContainer");
}

}  // namespace
}  // namespace dxshim::test
