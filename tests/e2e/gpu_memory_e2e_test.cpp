// GPUs shared by memory, end to end through a real containerd with the linux target: pods reserve
// GPU memory with dxshim.io/gpu-memory (or take the default), dxshim places them by free memory
// (spread, pack) and refuses what does not fit with the code and message the issue asks for, the
// reservations survive dxshim being killed (they are read back from containerd's own record:
// the dxshim.io/gpu-memory labels), and no GPU ever has more reserved than it has, even with
// dxshim killed while pods come and go; a pod limited by the memory resource (init and app
// containers with dxshim.io/plugin-memory-units) reserves each unit kubelet gave it once, and each
// container is told its own. The GPUs are the test's device nodes with 16Gi in the inventory
// (test_gpu.h): no GPU exists here.
#include <gtest/gtest.h>

#include <atomic>
#include <charconv>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "tests/support/gpu_node.h"
#include "tests/support/http_get.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;
using std::chrono::seconds;

constexpr std::uint64_t kGi = 1ull << 30;

class GpuMemory : public GpuNodeTest {
 protected:
  // A pod asking `memory` ("" for none) and `more` annotations, and its container created and
  // started; the status.
  grpc::Status Pod(const std::string& name, const std::string& memory,
                   std::map<std::string, std::string> more = {}, std::string* pod = nullptr) {
    if (!memory.empty()) more["dxshim.io/gpu-memory"] = memory;
    if (more.empty()) more["dxshim.io/gpu"] = "1";
    const auto id = RunPodWith(name, more);
    if (pod) *pod = id;
    std::string container;
    const auto s = CreateAndStart(id, &container);
    if (s.ok()) containers_[name] = container;
    return s;
  }

  std::map<std::string, std::string> LabelsOf(const std::string& container) {
    v1::ListContainersRequest list;
    list.mutable_filter()->set_id(container);
    v1::ListContainersResponse listed;
    EXPECT_TRUE(client_->runtime->ListContainers(Deadline(seconds(10)).get(), list, &listed).ok());
    if (listed.containers_size() != 1) return {};
    const auto& labels = listed.containers(0).labels();
    return {labels.begin(), labels.end()};
  }

  std::string GpuOf(const std::string& name) {
    return LabelsOf(containers_.at(name))["dxshim.io/devices"];
  }

  std::map<std::string, std::string> containers_;  // by pod name
};

TEST_F(GpuMemory, TwoSixGiPodsShareASixteenGiGpuAndTheThirdIsRefused) {
  StartDxshim(8);  // one 16Gi GPU; default 2Gi
  ASSERT_TRUE(Pod("a", "6Gi").ok()) << Log();
  ASSERT_TRUE(Pod("b", "6Gi").ok()) << Log();
  // Recorded where the ledger is rebuilt from, and told to the container.
  EXPECT_EQ(LabelsOf(containers_["a"])["dxshim.io/gpu-memory"], std::to_string(6 * kGi));
  EXPECT_EQ(Exec(containers_["a"], "echo $DXSHIM_GPU_MEMORY_BYTES").stdout_data(),
            std::to_string(6 * kGi) + "\n");
  auto refused = Pod("c", "6Gi");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(
      refused.error_message().find("reserves 6Gi of GPU memory per GPU, more than is free now"),
      std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find(
                "16Gi, 12Gi reserved (default/a 6Gi, default/b 6Gi), 4Gi free, 2/8 pods"),
            std::string::npos)
      << refused.error_message();

  // kill -9: the restarted dxshim reads both reservations back from containerd.
  KillDxshim();
  StartDxshim(8);
  EXPECT_TRUE(Pod("d", "4Gi").ok()) << Log();
  refused = Pod("e", "1Gi");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(
      refused.error_message().find("16Gi reserved (default/a 6Gi, default/b 6Gi, default/d 4Gi)"),
      std::string::npos)
      << refused.error_message();

  // Bad values: INVALID_ARGUMENT naming the annotation; more than the GPU has: FAILED_PRECONDITION
  // with the node's GPUs and their memory.
  for (const char* bad : {"0", "-1Gi", "6", "lots", "1.5"}) {
    const auto s =
        Pod(std::string("bad-") + std::to_string(std::hash<std::string>()(bad) % 1000), bad);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << bad << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("annotation dxshim.io/gpu-memory='" + std::string(bad) + "'"),
              std::string::npos)
        << s.error_message();
  }
  const auto too_large = Pod("huge", "17Gi");
  EXPECT_EQ(too_large.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(too_large.error_message().find("has 17Gi of memory to share; this node has: Test GPU"),
            std::string::npos)
      << too_large.error_message();
  EXPECT_NE(too_large.error_message().find("16384Mi)"), std::string::npos);
  EXPECT_EQ(dxshim_->Stop(), 0) << Log();
}

// Memory units ids `first` .. `first + count - 1`, as kubelet copies the device plugin's Allocate
// answer onto a container (dxshim.io/plugin-memory-units).
std::string UnitIds(unsigned first, unsigned count) {
  std::string out;
  for (unsigned i = first; i < first + count; ++i)
    out += (out.empty() ? "" : ",") + ("mem-00e2e200-" + std::to_string(i));
  return out;
}

// A pod limited by the memory resource: an init container of 2 units, then two app containers of
// 4 each, the first given the init container's 2 again (kubelet's device manager reuses an init
// container's devices, never an app container's). The pod reserves its 8 distinct units (8Gi),
// each container is told its own; that survives dxshim being killed, and a container the pod
// re-creates is told the same.
TEST_F(GpuMemory, APodReservesTheDistinctMemoryUnitsOfItsContainers) {
  const auto start = [&] {
    StartDxshim(8, {"--metrics-listen", "127.0.0.1:0", "--device-plugin", "false"});
  };
  start();
  const auto pod = RunPodWith("units", {});
  std::string init, app, sidecar;
  const auto with_units = [](runtime::v1::ContainerConfig c, const std::string& units) {
    (*c.mutable_annotations())["dxshim.io/plugin-memory-units"] = units;
    return c;
  };
  // The init container writes what it was told to its log and ends.
  ASSERT_TRUE(CreateAndStart(pod,
                             with_units(BusyboxRunning("init",
                                                       "echo budget=$DXSHIM_GPU_MEMORY_BYTES "
                                                       "total=$DXSHIM_GPU_MEMORY_TOTAL_BYTES"),
                                        UnitIds(0, 2)),
                             &init)
                  .ok())
      << Log();
  WaitUntilExited(init);
  std::stringstream init_log;
  init_log << std::ifstream(dir_ / "logs/init-0.log").rdbuf();
  EXPECT_NE(init_log.str().find("budget=" + std::to_string(2 * kGi) +
                                " total=" + std::to_string(16 * kGi)),
            std::string::npos)
      << init_log.str();
  ASSERT_TRUE(
      CreateAndStart(pod, with_units(BusyboxRunning("app", "exec sleep 3600"), UnitIds(0, 4)), &app)
          .ok())
      << Log();
  ASSERT_TRUE(
      CreateAndStart(pod, with_units(BusyboxRunning("sidecar", "exec sleep 3600"), UnitIds(4, 4)),
                     &sidecar)
          .ok())
      << Log();
  const auto budget = [&](const std::string& id) {
    return Exec(id, "echo $DXSHIM_GPU_MEMORY_BYTES $DXSHIM_GPU_MEMORY_TOTAL_BYTES").stdout_data();
  };
  const auto told = std::to_string(4 * kGi) + " " + std::to_string(16 * kGi) + "\n";
  EXPECT_EQ(budget(app), told);
  EXPECT_EQ(budget(sidecar), told);
  // The label the ledger is rebuilt from says what the pod reserved after each container.
  EXPECT_EQ(LabelsOf(app)["dxshim.io/gpu-memory"], std::to_string(4 * kGi));
  EXPECT_EQ(LabelsOf(sidecar)["dxshim.io/gpu-memory"], std::to_string(8 * kGi));
  // What the ledger holds, as its metrics show it, and as it admits: 8Gi more fit the 16Gi GPU,
  // 1Gi more does not.
  const auto reserved = [&] {
    const auto address = MetricsAddress(Log());
    std::string text;
    EXPECT_TRUE(WaitFor([&] { return HttpGet(address, "/readyz").status == 200; }, seconds(30)));
    text = HttpGet(address, "/metrics").body;
    return Sample(text, "dxshim_pod_gpu_memory_reserved_bytes", {"pod=\"units\""});
  };
  EXPECT_EQ(reserved(), 8.0 * kGi);
  ASSERT_TRUE(Pod("eight", "8Gi").ok()) << Log();
  auto refused = Pod("one", "1Gi");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("16Gi reserved (default/eight 8Gi, default/units 8Gi)"),
            std::string::npos)
      << refused.error_message();
  // Another container of the pod bringing a unit it does not hold: the growth does not fit.
  std::string more;
  refused = CreateAndStart(
      pod, with_units(BusyboxRunning("more", "exec sleep 3600"), UnitIds(8, 1)), &more);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find(
                "dxshim: pod default/units container more: its resource limit adds 1 x 1Gi of GPU "
                "memory the pod did not hold (1 given, 0 held already by the pod's other "
                "containers), which would grow the pod's reservation from 8Gi to 9Gi per GPU, more "
                "than is free now on its GPU(s)"),
            std::string::npos)
      << refused.error_message();

  // kill -9: the restarted dxshim reads the pod's units and its largest label back from
  // containerd; the app container, re-created, is told what it was.
  KillDxshim();
  start();
  EXPECT_EQ(reserved(), 8.0 * kGi) << Log();
  std::string again;
  ASSERT_TRUE(CreateAndStart(pod,
                             with_units(BusyboxRunning("app", "exec sleep 3600", 1), UnitIds(0, 4)),
                             &again)
                  .ok())
      << Log();
  EXPECT_EQ(budget(again), told);
  EXPECT_EQ(LabelsOf(again)["dxshim.io/gpu-memory"], std::to_string(8 * kGi));
  EXPECT_EQ(reserved(), 8.0 * kGi);
  refused = Pod("one-more", "1Gi");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  // The pod's 8 units came back too: a 9th would grow it past what is free.
  refused = CreateAndStart(
      pod, with_units(BusyboxRunning("more", "exec sleep 3600"), UnitIds(8, 1)), &more);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("from 8Gi to 9Gi per GPU"), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(dxshim_->Stop(), 0) << Log();
}

// Defaults (16Gi / 4 = 4Gi), explicit amounts and an exclusive pod on two 16Gi GPUs, placed as
// the rules say: spread takes the most free memory (ties: fewer pods, then inventory order), pack
// the least free memory that still fits.
TEST_F(GpuMemory, MixedPodsAreSpreadAndPackedByFreeMemory) {
  WriteInventory(2);
  const std::string first = "0000:e2:00.0";
  const std::string second = "0000:e2:00.1";
  StartDxshim(4, {"--placement", "spread"});
  ASSERT_TRUE(Pod("s1", "").ok()) << Log();      // 4Gi: both free, inventory order
  ASSERT_TRUE(Pod("s2", "10Gi").ok()) << Log();  // 16 free against 12
  ASSERT_TRUE(Pod("s3", "").ok()) << Log();      // 12 free against 6
  EXPECT_EQ(GpuOf("s1"), first);
  EXPECT_EQ(GpuOf("s2"), second);
  EXPECT_EQ(GpuOf("s3"), first);
  EXPECT_EQ(LabelsOf(containers_["s1"]).count("dxshim.io/gpu-memory"), 0u);  // the default
  std::string s2_pod;
  auto exclusive = Pod("x", "", {{"dxshim.io/sharing", "exclusive"}});
  EXPECT_EQ(exclusive.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  for (const auto& [sandbox, config] : configs_) {
    if (config.metadata().name() == "s2") s2_pod = sandbox;
  }
  client_->RemovePod(s2_pod);
  ASSERT_TRUE(Pod("x2", "", {{"dxshim.io/sharing", "exclusive"}}).ok()) << Log();
  EXPECT_EQ(GpuOf("x2"), second);
  EXPECT_EQ(Exec(containers_["x2"], "echo $DXSHIM_GPU_MEMORY_BYTES").stdout_data(),
            std::to_string(16 * kGi) + "\n");
  for (const auto& [sandbox, config] : configs_) client_->RemovePod(sandbox);
  configs_.clear();
  containers_.clear();

  StartDxshim(4, {"--placement", "pack"});
  ASSERT_TRUE(Pod("p1", "").ok()) << Log();      // 4Gi on the first
  ASSERT_TRUE(Pod("p2", "10Gi").ok()) << Log();  // best fit: the first (12 free)
  ASSERT_TRUE(Pod("p3", "").ok()) << Log();      // 2 free there: the second
  ASSERT_TRUE(Pod("p4", "2Gi").ok()) << Log();   // exactly the first's 2Gi
  EXPECT_EQ(GpuOf("p1"), first);
  EXPECT_EQ(GpuOf("p2"), first);
  EXPECT_EQ(GpuOf("p3"), second);
  EXPECT_EQ(GpuOf("p4"), first);
  exclusive = Pod("px", "", {{"dxshim.io/sharing", "exclusive"}});
  EXPECT_EQ(exclusive.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  for (const auto& [sandbox, config] : configs_) client_->RemovePod(sandbox);
  EXPECT_EQ(dxshim_->Stop(), 0) << Log();
}

// Pods of random sizes come and go from four threads while dxshim is killed (SIGKILL) and
// restarted under them. After each restart and at the end, containerd's own record (its ready
// sandboxes and the labels of their containers) never shows a GPU with more reserved than its
// 16Gi: a reservation is never lost, whenever dxshim dies.
TEST_F(GpuMemory, ChurnWithKillsNeverReservesMoreThanAGpuHas) {
  WriteInventory(2);
  StartDxshim(8, {"--resync-interval", "1s"});
  std::atomic<bool> stop{false};
  std::atomic<int> admitted{0};
  std::atomic<int> refused{0};
  CriClient containerd(containerd_.socket());  // containerd's own record, not through dxshim
  std::uint64_t most = 0;                      // the most reserved on a GPU at a check
  const auto check = [&] {
    // Sum the recorded reservations of every sandbox still ready, per GPU (the default, 2Gi,
    // for pods without the label).
    v1::ListPodSandboxResponse sandboxes;
    ASSERT_TRUE(
        containerd.runtime
            ->ListPodSandbox(Deadline(seconds(10)).get(), v1::ListPodSandboxRequest{}, &sandboxes)
            .ok());
    std::set<std::string> ready;
    for (const auto& s : sandboxes.items()) {
      if (s.state() == v1::SANDBOX_READY) ready.insert(s.id());
    }
    v1::ListContainersResponse listed;
    ASSERT_TRUE(
        containerd.runtime
            ->ListContainers(Deadline(seconds(10)).get(), v1::ListContainersRequest{}, &listed)
            .ok());
    std::map<std::string, std::uint64_t> reserved;
    std::set<std::string> counted;  // a pod counts once per GPU
    for (const auto& c : listed.containers()) {
      const auto& labels = c.labels();
      const auto gpu = labels.find("dxshim.io/devices");
      if (gpu == labels.end() || !ready.count(c.pod_sandbox_id())) continue;
      if (!counted.insert(c.pod_sandbox_id() + gpu->second).second) continue;
      const auto memory = labels.find("dxshim.io/gpu-memory");
      std::uint64_t bytes = 2 * kGi;
      if (memory != labels.end()) {
        std::from_chars(memory->second.data(), memory->second.data() + memory->second.size(),
                        bytes);
      }
      reserved[gpu->second] += bytes;
    }
    for (const auto& [gpu, bytes] : reserved) {
      EXPECT_LE(bytes, 16 * kGi) << gpu << " has " << bytes << " bytes reserved";
      most = std::max(most, bytes);
    }
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937 random(static_cast<unsigned>(w + 1));
      CriClient client(dxshim_->socket());
      for (int i = 0; !stop; ++i) {
        v1::RunPodSandboxRequest run;
        const auto name = "churn-" + std::to_string(w) + "-" + std::to_string(i);
        *run.mutable_config() = HostNetworkPod(name, "uid-" + name, dir_ / "logs");
        if (random() % 4 != 0) {
          (*run.mutable_config()->mutable_annotations())["dxshim.io/gpu-memory"] =
              std::to_string(3 + random() % 8) + "Gi";
        } else {
          (*run.mutable_config()->mutable_annotations())["dxshim.io/gpu"] = "1";
        }
        v1::RunPodSandboxResponse pod;
        if (!client.runtime->RunPodSandbox(Deadline(seconds(60)).get(), run, &pod).ok()) continue;
        std::string container;
        const auto s = client.CreateAndStart(pod.pod_sandbox_id(), run.config(),
                                             SleepingBusybox("app"), &container);
        if (s.ok()) {
          ++admitted;
        } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          ++refused;
        }
        // Most pods stay a while; some go at once.
        if (random() % 4 == 0) client.RemovePod(pod.pod_sandbox_id());
        if (random() % 2 == 0) {
          // An older pod of this worker goes (its sandbox stops and is removed).
          v1::ListPodSandboxResponse mine;
          v1::ListPodSandboxRequest list;
          if (client.runtime->ListPodSandbox(Deadline(seconds(10)).get(), list, &mine).ok()) {
            for (const auto& p : mine.items()) {
              if (p.metadata().name().starts_with("churn-" + std::to_string(w) + "-") &&
                  random() % 6 == 0) {
                client.RemovePod(p.id());
              }
            }
          }
        }
      }
    });
  }
  for (int kill = 0; kill < 5; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    KillDxshim();
    check();
    StartDxshim(8, {"--resync-interval", "1s"});
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop = true;
  for (auto& t : workers) t.join();
  check();
  std::cout << "churn: " << admitted << " pods admitted, " << refused
            << " refused on memory or slots; at most " << (most >> 20)
            << "Mi reserved on a GPU at a check\n";
  EXPECT_GT(admitted.load(), 4);
  EXPECT_GT(refused.load(), 0);
  EXPECT_GT(most, 10 * kGi);  // the checks saw GPUs well filled
  EXPECT_EQ(dxshim_->Stop(), 0) << Log();
}

}  // namespace
}  // namespace dxshim::test
