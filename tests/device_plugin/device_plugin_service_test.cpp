// kubelet's DevicePlugin service as dxshim serves it (shim/device_plugin/device_plugin_service.h),
// served by a real gRPC server on a real unix socket and called by a real gRPC client, as kubelet
// calls it: ListAndWatch's first list (every slot of every GPU, healthy) and a new list whenever
// the device snapshot or the runtime's record changes what is healthy; GetDevicePluginOptions (no
// PreStartContainer; GetPreferredAllocation only for memory units); Allocate's answer (per
// container, only the resource's annotation naming the ids kubelet chose), its INVALID_ARGUMENT
// for a request kubelet would not make (an unknown id, a container with none, an id twice in one
// container or given to two containers) and RESOURCE_EXHAUSTED only for memory that fits on no
// single GPU; calls refused when the peer is not admitted; the end of kubelet's stream told (an
// observer's not), and Stop ending the open streams. The GPUs are the one thing mocked: no
// Windows GPU exists here, so they are listed in a real inventory file the device snapshot reads.
#include "shim/device_plugin/device_plugin_service.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devices/make_device_source.h"
#include "shim/base/dxshim_keys.h"
#include "shim/device_plugin/plugin_memory_units.h"
#include "shim/device_plugin/plugin_slots.h"
#include "tests/support/temp_dir.h"

namespace dxshim::device_plugin {
namespace {

using std::chrono::seconds;
// The bound of every wait: generous, never what a test asserts.
constexpr auto kWait = seconds(30);

struct Gpu {
  std::string id;
  bool present = true;
};

// Writes an inventory file of `gpus` (4Gi each), replacing the file at once as an operator's
// configuration management does.
void WriteInventory(const std::string& path, const std::vector<Gpu>& gpus) {
  {
    std::ofstream out(path + ".tmp");
    out << "devices:\n";
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      out << "  - id: '" << gpus[i].id << "'\n"
          << "    luid: 0x00000000_0x0000D1A" << i << "\n"
          << "    locationPath: 'PCIROOT(0)#PCI(0" << i << "00)'\n"
          << "    vendor: NVIDIA\n"
          << "    vendorId: 0x10de\n"
          << "    class: display\n"
          << "    dedicatedMemory: 4Gi\n"
          << "    present: " << (gpus[i].present ? "true" : "false") << "\n";
    }
  }
  std::filesystem::rename(path + ".tmp", path);
}

// The service, served on `socket` by a real gRPC server, with a client's stub.
struct Served {
  Served(const devices::DeviceSnapshot& snapshot, PluginResource& resource,
         const std::string& socket, PeerAdmission admit = {}, WatchEnded ended = {})
      : service(snapshot, resource, {}, std::move(admit), std::move(ended)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    EXPECT_NE(server, nullptr);
    stub = v1beta1::DevicePlugin::NewStub(
        grpc::CreateChannel("unix://" + socket, grpc::InsecureChannelCredentials()));
  }
  ~Served() {
    service.Stop();
    server->Shutdown(std::chrono::system_clock::now() + seconds(5));
    server->Wait();
  }
  Served(const Served&) = delete;
  Served& operator=(const Served&) = delete;

  DevicePluginService service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
};

using Devices = std::vector<v1beta1::Device>;

std::size_t HealthyOf(const Devices& devices) {
  return static_cast<std::size_t>(
      std::count_if(devices.begin(), devices.end(),
                    [](const v1beta1::Device& d) { return d.health() == "Healthy"; }));
}

std::set<std::string> IdsOf(const Devices& devices) {
  std::set<std::string> ids;
  for (const auto& d : devices) ids.insert(d.id());
  return ids;
}

// One ListAndWatch stream, as kubelet (or, with `observer`, dxshim doctor) opens it.
class Watcher {
 public:
  explicit Watcher(v1beta1::DevicePlugin::Stub& stub, bool observer = false) {
    context_.set_deadline(std::chrono::system_clock::now() + 2 * kWait);
    if (observer) context_.AddMetadata(kObserverMetadata, "test");
    reader_ = stub.ListAndWatch(&context_, v1beta1::Empty());
  }
  ~Watcher() {
    if (finished_) return;
    context_.TryCancel();
    Finish();
  }
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // The first list from now on that `accept` takes (reading past the others), or nullopt when the
  // stream ends first.
  std::optional<Devices> Next(const std::function<bool(const Devices&)>& accept) {
    v1beta1::ListAndWatchResponse response;
    while (reader_->Read(&response)) {
      Devices devices(response.devices().begin(), response.devices().end());
      if (accept(devices)) return devices;
    }
    return std::nullopt;
  }
  std::optional<Devices> First() {
    return Next([](const Devices&) { return true; });
  }
  void Cancel() { context_.TryCancel(); }
  // Reads to the end of the stream: its status.
  grpc::Status Finish() {
    v1beta1::ListAndWatchResponse ignored;
    while (reader_->Read(&ignored)) {
    }
    finished_ = true;
    return reader_->Finish();
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>> reader_;
  bool finished_ = false;
};

v1beta1::AllocateRequest Request(const std::vector<std::vector<std::string>>& containers) {
  v1beta1::AllocateRequest request;
  for (const auto& ids : containers) {
    auto* container = request.add_container_requests();
    for (const auto& id : ids) container->add_devices_ids(id);
  }
  return request;
}

grpc::Status Allocate(v1beta1::DevicePlugin::Stub& stub,
                      const std::vector<std::vector<std::string>>& containers,
                      v1beta1::AllocateResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kWait);
  return stub.Allocate(&context, Request(containers), response);
}

class DevicePluginServiceTest : public ::testing::Test {
 protected:
  DevicePluginServiceTest() : inventory_(dir_ / "inventory.yaml"), socket_(dir_ / "plugin.sock") {
    WriteInventory(inventory_, {{"gpu-a"}, {"gpu-b"}});
    snapshot_ = std::make_unique<devices::DeviceSnapshot>(
        devices::MakeDeviceSource("inventory:" + inventory_), devices::SnapshotOptions());
  }
  // The inventory file now says `gpus`, and the snapshot has read it.
  void Change(const std::vector<Gpu>& gpus) {
    WriteInventory(inventory_, gpus);
    ASSERT_TRUE(snapshot_->Reload());
  }

  test::TempDir dir_;
  const std::string inventory_;
  const std::string socket_;
  std::unique_ptr<devices::DeviceSnapshot> snapshot_;
};

TEST_F(DevicePluginServiceTest, ListAndWatchListsEverySlotAtOnceThenEachChange) {
  PluginSlots slots(2);
  Served served(*snapshot_, slots, socket_);
  Watcher watcher(*served.stub);
  const auto first = watcher.First();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(IdsOf(*first), (std::set<std::string>{
                               PluginSlots::SlotId("gpu-a", 0), PluginSlots::SlotId("gpu-a", 1),
                               PluginSlots::SlotId("gpu-b", 0), PluginSlots::SlotId("gpu-b", 1)}));
  EXPECT_EQ(HealthyOf(*first), 4u);

  // A third GPU: its slots come, healthy.
  Change({{"gpu-a"}, {"gpu-b"}, {"gpu-c"}});
  const auto grown = watcher.Next([](const Devices& d) { return d.size() == 6; });
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(HealthyOf(*grown), 6u);
  EXPECT_TRUE(IdsOf(*grown).count(PluginSlots::SlotId("gpu-c", 1)));

  // A GPU marked absent keeps its slots, Unhealthy, so that kubelet lowers its count.
  Change({{"gpu-a", false}, {"gpu-b"}, {"gpu-c"}});
  const auto absent = watcher.Next([](const Devices& d) { return HealthyOf(d) == 4; });
  ASSERT_TRUE(absent.has_value());
  EXPECT_EQ(absent->size(), 6u);
  const std::set<std::string> of_a = {PluginSlots::SlotId("gpu-a", 0),
                                      PluginSlots::SlotId("gpu-a", 1)};
  for (const auto& d : *absent) EXPECT_EQ(d.health() == "Healthy", !of_a.count(d.id())) << d.id();

  // A pod that holds gpu-b by annotation only (the scheduler did not count it) takes a slot.
  RuntimeRecord record;
  record.ready_sandboxes = {"pod"};
  RecordedContainer held;
  held.container_id = "c";
  held.sandbox_id = "pod";
  held.device_ids = {"gpu-b"};
  record.containers = {held};
  served.service.SetRecord(record);
  const auto withheld = watcher.Next([](const Devices& d) { return HealthyOf(d) == 3; });
  ASSERT_TRUE(withheld.has_value());
  EXPECT_EQ(withheld->size(), 6u);
  // And gives it back when it is gone.
  served.service.SetRecord({});
  EXPECT_TRUE(watcher.Next([](const Devices& d) { return HealthyOf(d) == 4; }).has_value());
}

TEST_F(DevicePluginServiceTest, OptionsSayNoPreStartAndAPreferenceOnlyForMemoryUnits) {
  PluginSlots slots(2);
  auto ask = [](v1beta1::DevicePlugin::Stub& stub) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kWait);
    v1beta1::DevicePluginOptions options;
    EXPECT_TRUE(stub.GetDevicePluginOptions(&context, v1beta1::Empty(), &options).ok());
    return options;
  };
  {
    Served served(*snapshot_, slots, socket_);
    const auto options = ask(*served.stub);
    EXPECT_FALSE(options.pre_start_required());
    EXPECT_FALSE(options.get_preferred_allocation_available());
    // PreStartContainer is answered all the same.
    grpc::ClientContext context;
    v1beta1::PreStartContainerResponse response;
    EXPECT_TRUE(
        served.stub->PreStartContainer(&context, v1beta1::PreStartContainerRequest(), &response)
            .ok());
  }
  PluginMemoryUnits units{devices::AllocationPolicy()};
  Served served(*snapshot_, units, dir_ / "memory.sock");
  const auto options = ask(*served.stub);
  EXPECT_FALSE(options.pre_start_required());
  EXPECT_TRUE(options.get_preferred_allocation_available());
}

TEST_F(DevicePluginServiceTest, AllocateAnswersEachContainerWithOnlyTheResourcesAnnotation) {
  PluginSlots slots(2);
  Served served(*snapshot_, slots, socket_);
  const auto a0 = PluginSlots::SlotId("gpu-a", 0);
  const auto a1 = PluginSlots::SlotId("gpu-a", 1);
  const auto b0 = PluginSlots::SlotId("gpu-b", 0);
  v1beta1::AllocateResponse response;
  const auto status = Allocate(*served.stub, {{a0, b0}, {a1}}, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.container_responses_size(), 2);
  const std::string expected[] = {a0 + "," + b0, a1};
  for (int i = 0; i < 2; ++i) {
    const auto& answer = response.container_responses(i);
    EXPECT_EQ(answer.envs_size() + answer.mounts_size() + answer.devices_size() +
                  answer.cdi_devices_size(),
              0);
    ASSERT_EQ(answer.annotations_size(), 1);
    EXPECT_EQ(answer.annotations().at(keys::kPluginSlotsAnnotation), expected[i]);
  }

  PluginMemoryUnits units{devices::AllocationPolicy()};
  Served memory(*snapshot_, units, dir_ / "memory.sock");
  const auto unit = PluginMemoryUnits::UnitId("gpu-b", 2);
  v1beta1::AllocateResponse answered;
  ASSERT_TRUE(Allocate(*memory.stub, {{unit}}, &answered).ok());
  ASSERT_EQ(answered.container_responses_size(), 1);
  EXPECT_EQ(answered.container_responses(0).annotations().at(keys::kPluginMemoryUnitsAnnotation),
            unit);
}

TEST_F(DevicePluginServiceTest, AllocateRefusesIdsNotItsOwnAndContainersWithoutIds) {
  PluginSlots slots(2);
  Served served(*snapshot_, slots, socket_);
  const auto a0 = PluginSlots::SlotId("gpu-a", 0);
  for (const auto& containers : std::vector<std::vector<std::vector<std::string>>>{
           {{"gpu-00000000-9"}},
           {{a0}, {PluginMemoryUnits::UnitId("gpu-a", 0)}},  // the other resource's id
           {{a0}, {}},
       }) {
    v1beta1::AllocateResponse response;
    const auto status = Allocate(*served.stub, containers, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_EQ(response.container_responses_size(), 0);
  }
}

// Kubelet never names a device twice for one container: such a request is malformed
// (INVALID_ARGUMENT), not one the node lacks room for (it was RESOURCE_EXHAUSTED).
TEST_F(DevicePluginServiceTest, AllocateRefusesAnIdTwiceInOneContainerAsInvalid) {
  PluginSlots slots(2);
  Served served(*snapshot_, slots, socket_);
  const auto a0 = PluginSlots::SlotId("gpu-a", 0);
  v1beta1::AllocateResponse response;
  const auto status =
      Allocate(*served.stub, {{a0, PluginSlots::SlotId("gpu-b", 0), a0}}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("'" + a0 + "' is given twice to one container"),
            std::string::npos)
      << status.error_message();
}

// Kubelet gives a device to one container at a time: the same id for two containers of one
// request is refused (it was answered, both containers then counting the one slot).
TEST_F(DevicePluginServiceTest, AllocateRefusesOneIdForTwoContainers) {
  PluginSlots slots(2);
  Served served(*snapshot_, slots, socket_);
  const auto a0 = PluginSlots::SlotId("gpu-a", 0);
  v1beta1::AllocateResponse response;
  const auto status =
      Allocate(*served.stub, {{a0}, {PluginSlots::SlotId("gpu-b", 0), a0}}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("'" + a0 + "' is given to two containers"),
            std::string::npos)
      << status.error_message();
  EXPECT_EQ(response.container_responses_size(), 0);
}

// The one refusal that is about room: memory units that fit on no single GPU.
TEST_F(DevicePluginServiceTest, AllocateRefusesMemoryFittingOnNoSingleGpuAsExhausted) {
  PluginMemoryUnits units{devices::AllocationPolicy()};
  Served served(*snapshot_, units, socket_);
  const auto per_gpu =
      MemoryUnitsOf(snapshot_->Current()->devices.front(), devices::AllocationPolicy());
  ASSERT_GT(per_gpu, 0u);
  std::vector<std::string> ids;
  for (unsigned n = 0; n < per_gpu; ++n) ids.push_back(PluginMemoryUnits::UnitId("gpu-a", n));
  auto over = ids;
  over.push_back(PluginMemoryUnits::UnitId("gpu-b", 0));
  v1beta1::AllocateResponse response;
  const auto status = Allocate(*served.stub, {over}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(Allocate(*served.stub, {ids}, &response).ok());  // one GPU's worth fits
}

TEST_F(DevicePluginServiceTest, CallsOfPeersNotAdmittedAreRefused) {
  PluginSlots slots(2);
  std::mutex mutex;
  std::set<std::string> peers;
  Served served(*snapshot_, slots, socket_, [&](std::string_view peer) {
    std::lock_guard lock(mutex);
    peers.insert(std::string(peer));
    return false;
  });
  v1beta1::AllocateResponse response;
  EXPECT_EQ(Allocate(*served.stub, {{PluginSlots::SlotId("gpu-a", 0)}}, &response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  grpc::ClientContext context;
  v1beta1::DevicePluginOptions options;
  EXPECT_EQ(served.stub->GetDevicePluginOptions(&context, v1beta1::Empty(), &options).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  Watcher watcher(*served.stub);
  EXPECT_FALSE(watcher.First().has_value());
  EXPECT_EQ(watcher.Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  std::lock_guard lock(mutex);
  EXPECT_FALSE(peers.empty());  // asked with the caller's peer
}

TEST_F(DevicePluginServiceTest, TheEndOfKubeletsStreamIsToldAndAnObserversIsNot) {
  PluginSlots slots(1);
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::uint64_t> ended;
  Served served(*snapshot_, slots, socket_, {}, [&](std::uint64_t number) {
    {
      std::lock_guard lock(mutex);
      ended.push_back(number);
    }
    cv.notify_all();
  });
  {
    Watcher observer(*served.stub, true);
    ASSERT_TRUE(observer.First().has_value());
    Watcher kubelet(*served.stub);
    ASSERT_TRUE(kubelet.First().has_value());
    EXPECT_EQ(served.service.watches_opened(), 1u);  // the observer's is not numbered
    observer.Cancel();
    EXPECT_EQ(observer.Finish().error_code(), grpc::StatusCode::CANCELLED);
    kubelet.Cancel();  // kubelet went away
  }
  std::unique_lock lock(mutex);
  ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return !ended.empty(); }));
  EXPECT_EQ(ended, std::vector<std::uint64_t>{1});
}

TEST_F(DevicePluginServiceTest, StopEndsTheOpenStreamsWithoutTellingOfTheirEnd) {
  PluginSlots slots(1);
  std::mutex mutex;
  std::vector<std::uint64_t> ended;
  {
    Served served(*snapshot_, slots, socket_, {}, [&](std::uint64_t number) {
      std::lock_guard lock(mutex);
      ended.push_back(number);
    });
    Watcher watcher(*served.stub);
    ASSERT_TRUE(watcher.First().has_value());
    served.service.Stop();
    EXPECT_EQ(watcher.Finish().error_code(), grpc::StatusCode::OK);
    // A stream opened while stopping ends at once, after its list.
    Watcher late(*served.stub);
    EXPECT_TRUE(late.First().has_value());
    EXPECT_TRUE(late.Finish().ok());
  }  // the server shut down and waited for: every end it would report is reported by now
  std::lock_guard lock(mutex);
  EXPECT_TRUE(ended.empty());
}

}  // namespace
}  // namespace dxshim::device_plugin
