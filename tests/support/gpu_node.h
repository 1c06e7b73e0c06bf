// A node for the end-to-end GPU tests: a real containerd private to the test, test GPUs (device
// nodes, see test_gpu.h) in an inventory file, and the real dxshim binary in front of containerd
// with the linux target, driven through CRI the way kubelet drives it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/containerd.h"
#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_gpu.h"

namespace dxshim::test {

class GpuNodeTest : public testing::Test {
 protected:
  GpuNodeTest();

  // Lists the first `devices` (1 or 2) test GPUs in the inventory dxshim reads.
  void WriteInventory(std::size_t devices);
  // (Re)starts dxshim (debug log) with `max_per_device` pods per GPU and `extra` flags.
  void StartDxshim(unsigned max_per_device, const std::vector<std::string>& extra = {});
  void KillDxshim();  // SIGKILL, as in a crash
  std::string Log() { return dxshim_ ? dxshim_->process().Log() : ""; }

  // RunPodSandbox through dxshim (or, with `client`, through that client); `wants_gpu` adds the
  // annotation dxshim.io/gpu: "1"; `handler` is the runtime handler ("": containerd's default).
  std::string RunPod(const std::string& name, bool wants_gpu, const std::string& handler = "",
                     CriClient* client = nullptr);
  // RunPodSandbox through dxshim of a pod with these annotations.
  std::string RunPodWith(const std::string& name,
                         const std::map<std::string, std::string>& annotations);
  // CreateContainer through dxshim in `pod` (with the pod's sandbox config, as kubelet sends it)
  // and, when that worked, StartContainer. Returns the first status that is not OK.
  grpc::Status CreateAndStart(const std::string& pod, const runtime::v1::ContainerConfig& config,
                              std::string* id);
  // The same with a busybox sleeping for an hour, named "app".
  grpc::Status CreateAndStart(const std::string& pod, std::string* id);
  // Waits until the runtime reports the container exited (a test failure if it does not).
  void WaitUntilExited(const std::string& id);
  // Waits until dxshim has rebuilt its ledger from the runtime `count` more times.
  void WaitForResyncs(int count);
  runtime::v1::ExecSyncResponse Exec(const std::string& id, const std::string& script);
  // The dxshim.io/devices label of a container: what dxshim gave it.
  std::string DevicesOf(const std::string& id);

  TempDir dir_;
  DeviceNode nodes_[2] = {DeviceNode("e2e", 0), DeviceNode("e2e", 1)};
  Containerd containerd_;
  std::unique_ptr<DxshimProcess> dxshim_;
  std::unique_ptr<CriClient> client_;
  std::map<std::string, runtime::v1::PodSandboxConfig> configs_;
};

// A busybox container that runs `sh -c SCRIPT`, named `name`, with kubelet's `attempt` count.
runtime::v1::ContainerConfig BusyboxRunning(const std::string& name, const std::string& script,
                                            unsigned attempt = 0);

}  // namespace dxshim::test
