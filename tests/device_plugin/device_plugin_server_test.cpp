// The device plugin's server (shim/device_plugin/device_plugin_server.h) on Linux's gRPC unix
// sockets, with the test kubelet (tests/support/test_kubelet.h: kubelet's device manager over real
// sockets in a test directory) or a bare Registration service: nothing is served before
// kubelet.sock exists; once it does, the plugin serves `<dir>/dxshim.sock` and registers (API
// v1beta1, its endpoint and resource name, no PreStartContainer), kubelet lists its slots and
// admits a pod with them; a refused registration is tried again until kubelet takes it; a kubelet
// restart (its socket removed) and a dropped stream each bring a new registration; the runtime's
// record, given before or after serving, reaches kubelet's list; Stop removes the socket and
// kubelet's stream ends. The one thing mocked is the GPUs (no Windows GPU exists here): they are
// listed in a real inventory file. Windows' bridged sockets are tested under wine
// (device_plugin_bridge_e2e_test).
#include "shim/device_plugin/device_plugin_server.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "devices/make_device_source.h"
#include "shim/base/dxshim_keys.h"
#include "shim/device_plugin/plugin_slots.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_kubelet.h"

namespace dxshim::device_plugin {
namespace {

using std::chrono::seconds;
using test::TestKubelet;
// The bound of every wait: generous, never what a test asserts.
constexpr auto kWait = seconds(30);

// Waits until `done` holds, looking every few milliseconds, at most kWait.
template <typename Done>
bool Eventually(Done done) {
  const auto until = std::chrono::steady_clock::now() + kWait;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// An inventory file of two GPUs (no GPU exists here).
void WriteInventory(const std::string& path) {
  std::ofstream out(path);
  out << "devices:\n";
  for (int i = 0; i < 2; ++i) {
    out << "  - id: 'gpu-" << i << "'\n"
        << "    luid: 0x00000000_0x0000D1A" << i << "\n"
        << "    locationPath: 'PCIROOT(0)#PCI(0" << i << "00)'\n"
        << "    vendorId: 0x10de\n"
        << "    class: display\n"
        << "    dedicatedMemory: 4Gi\n"
        << "    present: true\n";
  }
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

class DevicePluginServerTest : public ::testing::Test {
 protected:
  DevicePluginServerTest() {
    WriteInventory(dir_ / "inventory.yaml");
    snapshot_ = std::make_unique<devices::DeviceSnapshot>(
        devices::MakeDeviceSource("inventory:" + (dir_ / "inventory.yaml")),
        devices::SnapshotOptions());
    std::filesystem::create_directories(plugins_);
  }

  // Two slots per GPU, on gRPC's own unix sockets, looking for kubelet every 20 ms.
  std::unique_ptr<DevicePluginServer> MakeServer() {
    DevicePluginOptions options;
    options.dir = plugins_;
    options.resource_name = keys::kGpuResource;
    options.sockets = PluginSockets::kGrpcUnix;
    options.watch_interval = std::chrono::milliseconds(20);
    return std::make_unique<DevicePluginServer>(options, *snapshot_,
                                                std::make_unique<PluginSlots>(2));
  }

  // Waits for kubelet's list of the slots: `healthy` of 4.
  static bool Lists(TestKubelet& kubelet, std::size_t healthy) {
    return kubelet
        .WaitForDevices(
            [&](const std::vector<v1beta1::Device>& d) {
              return d.size() == 4 && test::HealthyCount(d) == healthy;
            },
            kWait)
        .has_value();
  }

  test::TempDir dir_;
  const std::string plugins_ = dir_ / "device-plugins";
  const std::string socket_ = plugins_ + "/" + kSlotsEndpoint;
  std::unique_ptr<devices::DeviceSnapshot> snapshot_;
};

TEST_F(DevicePluginServerTest, ServesAndRegistersOnceKubeletIsThereThenKubeletAdmitsWithIt) {
  TestKubelet kubelet(plugins_, /*start=*/false);
  auto server = MakeServer();
  server->Start();
  // No kubelet.sock: nothing served (the server only serves once it exists). The watcher looks
  // every 20 ms: after ten of its looks (a wait, not what is asserted) it has served nothing.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(Exists(socket_));
  kubelet.Start();
  const auto request = kubelet.WaitForRegistration(1, kWait);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->version(), "v1beta1");
  EXPECT_EQ(request->endpoint(), kSlotsEndpoint);
  EXPECT_EQ(request->resource_name(), keys::kGpuResource);
  EXPECT_FALSE(request->options().pre_start_required());
  EXPECT_FALSE(request->options().get_preferred_allocation_available());
  EXPECT_TRUE(Exists(socket_));
  ASSERT_TRUE(Lists(kubelet, 4));
  const auto options = kubelet.PluginOptions();
  ASSERT_TRUE(options.has_value());
  EXPECT_FALSE(options->pre_start_required());

  std::map<std::string, std::string> annotations;
  std::vector<std::string> devices;
  const auto admitted = kubelet.Allocate(2, &annotations, &devices);
  ASSERT_TRUE(admitted.ok()) << admitted.error_message();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(annotations.at(keys::kPluginSlotsAnnotation), devices[0] + "," + devices[1]);
}

// A bare Registration service that refuses the first `refused` calls, as kubelet refuses a
// plugin it will not take.
class RefusingKubelet final : public v1beta1::Registration::Service {
 public:
  RefusingKubelet(const std::string& socket, int refused) : refused_(refused) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~RefusingKubelet() override {
    server_->Shutdown(std::chrono::system_clock::now() + seconds(5));
    server_->Wait();
  }
  RefusingKubelet(const RefusingKubelet&) = delete;
  RefusingKubelet& operator=(const RefusingKubelet&) = delete;

  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest*,
                        v1beta1::Empty*) override {
    grpc::Status status;
    {
      std::lock_guard lock(mutex_);
      ++calls_;
      if (calls_ <= refused_) status = {grpc::StatusCode::INVALID_ARGUMENT, "refused"};
    }
    cv_.notify_all();
    return status;
  }
  bool WaitForCalls(int n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kWait, [&] { return calls_ >= n; });
  }

 private:
  const int refused_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int calls_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(DevicePluginServerTest, ARefusedRegistrationIsTriedAgainUntilTaken) {
  RefusingKubelet kubelet(plugins_ + "/kubelet.sock", 2);
  auto server = MakeServer();
  server->Start();
  EXPECT_TRUE(kubelet.WaitForCalls(3));  // two refused, the third taken
}

TEST_F(DevicePluginServerTest, RegistersAgainAfterAKubeletRestartAndADroppedStream) {
  TestKubelet kubelet(plugins_);
  auto server = MakeServer();
  server->Start();
  ASSERT_TRUE(kubelet.WaitForRegistration(1, kWait).has_value());
  ASSERT_TRUE(Lists(kubelet, 4));

  // Kubelet restarts: it removes the sockets in its directory, the plugin's too.
  kubelet.Restart();
  ASSERT_TRUE(kubelet.WaitForRegistrationSinceStart(kWait));
  EXPECT_TRUE(Lists(kubelet, 4));
  EXPECT_TRUE(Exists(socket_));

  // Kubelet drops the plugin's stream; kubelet.sock is the same file.
  const auto before = kubelet.registrations();
  kubelet.DropPlugin();
  EXPECT_TRUE(kubelet.WaitForRegistration(before + 1, kWait).has_value());
  EXPECT_TRUE(Lists(kubelet, 4));
}

TEST_F(DevicePluginServerTest, TheRuntimesRecordReachesKubeletsListBeforeAndAfterServing) {
  // A pod holding gpu-0 by annotation only (the scheduler did not count it) takes a slot.
  RuntimeRecord record;
  record.ready_sandboxes = {"pod"};
  RecordedContainer held;
  held.container_id = "c";
  held.sandbox_id = "pod";
  held.device_ids = {"gpu-0"};
  record.containers = {held};

  auto server = MakeServer();
  server->SetRecord(record);  // before it serves: kept for the service it makes
  server->Start();
  TestKubelet kubelet(plugins_);
  ASSERT_TRUE(Lists(kubelet, 3));
  server->SetRecord({});
  EXPECT_TRUE(Lists(kubelet, 4));
  server->SetRecord(record);
  EXPECT_TRUE(Lists(kubelet, 3));
}

TEST_F(DevicePluginServerTest, StopRemovesItsSocketAndEndsKubeletsStream) {
  TestKubelet kubelet(plugins_);
  auto server = MakeServer();
  server->Start();
  ASSERT_TRUE(Lists(kubelet, 4));
  ASSERT_EQ(kubelet.Available(), 4u);
  server->Stop();
  EXPECT_FALSE(Exists(socket_));
  // Kubelet's stream ended: no healthy device until a plugin registers again.
  EXPECT_TRUE(Eventually([&] { return kubelet.Available() == 0; }));
  EXPECT_TRUE(Exists(plugins_ + "/kubelet.sock"));  // kubelet's own is left alone
}

}  // namespace
}  // namespace dxshim::device_plugin
