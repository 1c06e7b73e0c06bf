// The test kubelet (tests/support/test_kubelet.h) against a tiny device plugin served by this test
// on a unix socket: it asks the plugin's options once per registration, picks devices in a random
// order that a seed repeats (never front to back), reuses an init container's devices as kubelet
// v1.26's device manager does, calls Allocate once per container and resource, follows
// GetPreferredAllocation's answer as kubelet does (invalid ids ignored, a short answer completed,
// a failed call failing the pod), fails a whole pod with kubelet's UnexpectedAdmissionError and
// keeps nothing of it for the next pod, and checkpoints one entry per pod, container and resource.
#include "tests/support/test_kubelet.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "shim/install/kubelet/kubelet_checkpoint.h"
#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

using std::chrono::seconds;
using Ids = std::vector<std::string>;
constexpr const char* kResource = "example.com/thing";

// A device plugin of `n` healthy devices dev-0 ... dev-(n-1), recording what kubelet asks.
class FakePlugin final : public v1beta1::DevicePlugin::Service {
 public:
  // How it answers GetPreferredAllocation.
  enum class Preference { kHighest, kUnknownAndLowest, kFail };

  FakePlugin(const TempDir& dir, std::size_t n, bool preferred)
      : dir_(dir.path()), preferred_(preferred) {
    for (std::size_t i = 0; i < n; ++i) {
      auto* d = list_.add_devices();
      d->set_id("dev-" + std::to_string(i));
      d->set_health("Healthy");
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + dir_ + "/fake.sock", grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~FakePlugin() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_->Shutdown(std::chrono::system_clock::now() + seconds(1));
  }

  // Registers with the kubelet in the same directory. The request's own options say the
  // opposite of GetDevicePluginOptions: kubelet must ask.
  grpc::Status Register() {
    auto stub = v1beta1::Registration::NewStub(grpc::CreateChannel(
        "unix://" + dir_ + "/kubelet.sock", grpc::InsecureChannelCredentials()));
    v1beta1::RegisterRequest request;
    request.set_version("v1beta1");
    request.set_endpoint("fake.sock");
    request.set_resource_name(kResource);
    request.mutable_options()->set_get_preferred_allocation_available(!preferred_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    v1beta1::Empty empty;
    return stub->Register(&context, request, &empty);
  }

  void set_preference(Preference p) {
    std::lock_guard lock(mutex_);
    preference_ = p;
  }
  // Allocate refuses every request of exactly `n` ids (0: none) with FAILED_PRECONDITION.
  void set_refuse_size(int n) {
    std::lock_guard lock(mutex_);
    refuse_size_ = n;
  }
  std::size_t options_calls() {
    std::lock_guard lock(mutex_);
    return options_calls_;
  }
  std::vector<Ids> allocations() {
    std::lock_guard lock(mutex_);
    return allocations_;
  }
  std::vector<v1beta1::ContainerPreferredAllocationRequest> preferred_requests() {
    std::lock_guard lock(mutex_);
    return preferred_requests_;
  }

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* out) override {
    std::lock_guard lock(mutex_);
    ++options_calls_;
    out->set_get_preferred_allocation_available(preferred_);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    {
      std::lock_guard lock(mutex_);
      if (!writer->Write(list_)) return grpc::Status::OK;
    }
    std::unique_lock lock(mutex_);
    while (!stopping_ && !context->IsCancelled()) cv_.wait_for(lock, std::chrono::milliseconds(50));
    return grpc::Status::OK;
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* response) override {
    std::lock_guard lock(mutex_);
    for (const auto& ask : request->container_requests()) preferred_requests_.push_back(ask);
    if (preference_ == Preference::kFail) {
      return {grpc::StatusCode::UNAVAILABLE, "fake plugin: no preference today"};
    }
    for (const auto& ask : request->container_requests()) {
      auto* answer = response->add_container_responses();
      Ids available(ask.available_deviceids().begin(), ask.available_deviceids().end());
      std::sort(available.begin(), available.end());
      if (preference_ == Preference::kUnknownAndLowest) {
        // One id it never listed and one real one: too few, and one of them invalid.
        answer->add_deviceids("not-a-device");
        answer->add_deviceids(available.front());
        continue;
      }
      // The ones it must include, then the highest ids, up to the size asked.
      Ids chosen(ask.must_include_deviceids().begin(), ask.must_include_deviceids().end());
      for (auto it = available.rbegin(); it != available.rend(); ++it) {
        if (chosen.size() >= static_cast<std::size_t>(ask.allocation_size())) break;
        if (std::find(chosen.begin(), chosen.end(), *it) == chosen.end()) chosen.push_back(*it);
      }
      for (const auto& id : chosen) answer->add_deviceids(id);
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override {
    std::lock_guard lock(mutex_);
    for (const auto& ask : request->container_requests()) {
      allocations_.emplace_back(ask.devices_ids().begin(), ask.devices_ids().end());
      if (refuse_size_ > 0 && ask.devices_ids_size() == refuse_size_) {
        return {grpc::StatusCode::FAILED_PRECONDITION, "fake plugin: not those"};
      }
      std::string joined;
      for (const auto& id : ask.devices_ids()) joined += (joined.empty() ? "" : ",") + id;
      (*response->add_container_responses()->mutable_annotations())["test.dxshim.io/ids"] = joined;
    }
    return grpc::Status::OK;
  }

 private:
  const std::string dir_;
  const bool preferred_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  v1beta1::ListAndWatchResponse list_;
  Preference preference_ = Preference::kHighest;
  int refuse_size_ = 0;
  std::size_t options_calls_ = 0;
  std::vector<Ids> allocations_;
  std::vector<v1beta1::ContainerPreferredAllocationRequest> preferred_requests_;
  std::unique_ptr<grpc::Server> server_;
};

class TestKubeletTest : public ::testing::Test {
 protected:
  // A kubelet and a registered plugin of `n` devices whose list the kubelet has.
  void StartWith(std::size_t n, bool preferred = false) {
    kubelet_ = std::make_unique<TestKubelet>(dir_.path());
    plugin_ = std::make_unique<FakePlugin>(dir_, n, preferred);
    const auto registered = plugin_->Register();
    ASSERT_TRUE(registered.ok()) << registered.error_message();
    ASSERT_TRUE(kubelet_->WaitForDevices(
        [&](const std::vector<v1beta1::Device>& d) { return HealthyCount(d) == n; }, seconds(10),
        kResource));
  }
  void TearDown() override {
    plugin_.reset();
    kubelet_.reset();
  }

  TestKubelet::PodAdmission Admit(const std::string& uid,
                                  const std::vector<TestKubelet::ContainerAsk>& containers,
                                  grpc::Status* status = nullptr) {
    TestKubelet::PodAdmission out;
    const auto s = kubelet_->AdmitPod(uid, containers, &out);
    if (status) {
      *status = s;
    } else {
      EXPECT_TRUE(s.ok()) << uid << ": " << s.error_message();
    }
    return out;
  }
  static TestKubelet::ContainerAsk App(const std::string& name, unsigned n) {
    return {name, false, {{kResource, n}}};
  }
  static TestKubelet::ContainerAsk Init(const std::string& name, unsigned n) {
    return {name, true, {{kResource, n}}};
  }
  std::vector<install::PodDeviceEntry> Checkpoint() {
    return install::PodDeviceEntries(ReadFile(dir_ / "kubelet_internal_checkpoint"));
  }

  TempDir dir_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::unique_ptr<FakePlugin> plugin_;
};

std::set<std::string> SetOf(const Ids& ids) { return {ids.begin(), ids.end()}; }

TEST_F(TestKubeletTest, PicksInARandomOrderThatASeedRepeatsNeverFrontToBack) {
  StartWith(8);
  const auto admit_eight = [&] {
    Ids picks;
    for (int i = 0; i < 8; ++i) {
      const auto uid = "pod-" + std::to_string(i);
      const auto pod = Admit(uid, {App("app", 1)});
      const auto it = pod.devices.find("app");
      if (it == pod.devices.end() || it->second.count(kResource) == 0) return picks;
      const auto& got = it->second.at(kResource);
      EXPECT_EQ(got.size(), 1u);
      picks.insert(picks.end(), got.begin(), got.end());
    }
    for (int i = 0; i < 8; ++i) kubelet_->FreePod("pod-" + std::to_string(i));
    return picks;
  };
  const auto first = admit_eight();
  ASSERT_EQ(SetOf(first).size(), 8u) << "every device once";
  const Ids front_to_back = {"dev-0", "dev-1", "dev-2", "dev-3",
                             "dev-4", "dev-5", "dev-6", "dev-7"};
  EXPECT_NE(first, front_to_back) << "kubelet takes devices from a Go set: in a random order";
  EXPECT_NE(first.front(), "dev-0");
  // The plugin was asked for exactly what each pod got.
  const auto asked = plugin_->allocations();
  ASSERT_EQ(asked.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(asked[i], Ids{first[i]});

  // The same seed, the same picks; another seed, another order.
  kubelet_->set_seed(TestKubelet::kDefaultSeed);
  EXPECT_EQ(admit_eight(), first);
  kubelet_->set_seed(TestKubelet::kDefaultSeed + 1);
  const auto other = admit_eight();
  EXPECT_EQ(SetOf(other).size(), 8u);
  EXPECT_NE(other, first);

  // Several devices at once are not the first ones of the list either, and Allocate's one-
  // container pods each have a UID of their own.
  kubelet_->set_seed(TestKubelet::kDefaultSeed);
  std::map<std::string, std::string> annotations;
  Ids three, two;
  ASSERT_TRUE(kubelet_->Allocate(3, &annotations, &three, kResource).ok());
  EXPECT_NE(SetOf(three), (std::set<std::string>{"dev-0", "dev-1", "dev-2"}));
  EXPECT_EQ(annotations.at("test.dxshim.io/ids"), three[0] + "," + three[1] + "," + three[2]);
  ASSERT_TRUE(kubelet_->Allocate(2, &annotations, &two, kResource).ok());
  const auto entries = Checkpoint();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_NE(entries[0].pod_uid, entries[1].pod_uid);
  for (const auto& e : entries) {
    EXPECT_EQ(e.container, "app");
    EXPECT_EQ(e.resource, kResource);
  }
}

TEST_F(TestKubeletTest, InitContainersDevicesAreReusedAndAppContainersKeepTheirOwn) {
  StartWith(6);
  // In pod order whatever the order given: init containers first, then app containers.
  const auto pod =
      Admit("pod-a", {App("main", 2), Init("setup", 2), App("side", 1), Init("warm", 1)});
  const auto setup = SetOf(pod.devices.at("setup").at(kResource));
  const auto warm = SetOf(pod.devices.at("warm").at(kResource));
  const auto main = SetOf(pod.devices.at("main").at(kResource));
  const auto side = SetOf(pod.devices.at("side").at(kResource));
  ASSERT_EQ(setup.size(), 2u);
  // The second init container and the first app container take the first one's devices...
  EXPECT_TRUE(std::includes(setup.begin(), setup.end(), warm.begin(), warm.end()));
  EXPECT_EQ(main, setup);
  // ...and an app container's devices are its own: the next one gets a new device.
  ASSERT_EQ(side.size(), 1u);
  EXPECT_EQ(setup.count(*side.begin()), 0u);
  // One Allocate call per container (and resource), init containers first.
  const auto asked = plugin_->allocations();
  ASSERT_EQ(asked.size(), 4u);
  EXPECT_EQ(SetOf(asked[0]), setup);
  EXPECT_EQ(SetOf(asked[1]), warm);
  EXPECT_EQ(SetOf(asked[2]), main);
  EXPECT_EQ(SetOf(asked[3]), side);
  EXPECT_EQ(pod.annotations.at("side").at("test.dxshim.io/ids"), *side.begin());

  // The pod holds 3 devices: 3 are left for other pods, then none.
  Admit("pod-b", {App("app", 3)});
  grpc::Status refused;
  Admit("pod-c", {App("app", 1)}, &refused);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find(
                "UnexpectedAdmissionError: Allocate failed due to requested number of devices "
                "unavailable for example.com/thing. Requested: 1, Available: 0, which is "
                "unexpected"),
            std::string::npos)
      << refused.error_message();

  // kubelet's checkpoint: one entry per pod, container and resource.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> entries;
  for (const auto& e : Checkpoint()) {
    EXPECT_EQ(e.resource, kResource);
    EXPECT_TRUE(entries.emplace(std::pair(e.pod_uid, e.container), SetOf(e.device_ids)).second)
        << e.pod_uid << " " << e.container << " twice";
  }
  EXPECT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries.at({"pod-a", "setup"}), setup);
  EXPECT_EQ(entries.at({"pod-a", "warm"}), warm);
  EXPECT_EQ(entries.at({"pod-a", "main"}), main);
  EXPECT_EQ(entries.at({"pod-a", "side"}), side);
  EXPECT_EQ(entries.at({"pod-b", "app"}).size(), 3u);

  // Free drops the devices it names (and the entries left empty), FreePod a whole pod.
  kubelet_->Free({*side.begin()}, kResource);
  EXPECT_EQ(Checkpoint().size(), 4u);
  kubelet_->FreePod("pod-a");
  EXPECT_EQ(Checkpoint().size(), 1u);
  Admit("pod-d", {App("app", 3)});
}

TEST_F(TestKubeletTest, AFailedPodFailsWholeAndLeavesNothingToTheNextPod) {
  StartWith(4);
  // The second container cannot have 3 devices: the pod fails, as kubelet reports it.
  grpc::Status failed;
  Admit("greedy", {App("a", 2), App("b", 3)}, &failed);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(failed.error_message().find("UnexpectedAdmissionError: Allocate failed due to "
                                        "requested number of devices unavailable for "
                                        "example.com/thing. Requested: 3, Available: 2"),
            std::string::npos)
      << failed.error_message();
  // As kubelet, it leaves the first container's entry until the next pod's admission...
  const auto left = Checkpoint();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].pod_uid, "greedy");
  EXPECT_EQ(left[0].container, "a");
  // ...which has every device.
  const auto next = Admit("next", {App("app", 4)});
  EXPECT_EQ(next.devices.at("app").at(kResource).size(), 4u);
  for (const auto& e : Checkpoint()) EXPECT_EQ(e.pod_uid, "next");
  kubelet_->FreePod("next");

  // The plugin refuses the second container's Allocate: the pod fails with the plugin's code.
  plugin_->set_refuse_size(3);
  Admit("refused", {App("a", 1), App("b", 3)}, &failed);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(failed.error_message().find(
                "UnexpectedAdmissionError: Allocate failed due to rpc error: code = "
                "FailedPrecondition desc = fake plugin: not those, which is unexpected"),
            std::string::npos)
      << failed.error_message();
  plugin_->set_refuse_size(0);
  EXPECT_EQ(Admit("after", {App("app", 4)}).devices.at("app").at(kResource).size(), 4u);
  kubelet_->FreePod("after");

  // A resource no plugin has listed is not the device manager's: kubelet admits it without
  // devices (and without asking any plugin).
  const auto calls = plugin_->allocations().size();
  const auto other = Admit("other", {{"app", false, {{"example.com/none", 1}}}});
  EXPECT_TRUE(other.devices.empty());
  EXPECT_EQ(plugin_->allocations().size(), calls);
}

TEST_F(TestKubeletTest, FollowsGetPreferredAllocationAsKubeletDoes) {
  StartWith(6, /*preferred=*/true);
  // Asked once, at the registration (the RegisterRequest's options say the opposite).
  EXPECT_EQ(plugin_->options_calls(), 1u);
  ASSERT_TRUE(kubelet_->PluginOptions(kResource).has_value());
  EXPECT_TRUE(kubelet_->PluginOptions(kResource)->get_preferred_allocation_available());

  // The plugin prefers the highest ids: kubelet takes them.
  auto pod = Admit("high", {App("app", 2)});
  EXPECT_EQ(SetOf(pod.devices.at("app").at(kResource)), (std::set<std::string>{"dev-4", "dev-5"}));
  auto asked = plugin_->preferred_requests();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].available_deviceids_size(), 6);
  EXPECT_EQ(asked[0].must_include_deviceids_size(), 0);
  EXPECT_EQ(asked[0].allocation_size(), 2);
  kubelet_->FreePod("high");

  // An app container after an init container: the reusable device is offered and must be
  // included, for the container's whole count.
  pod = Admit("reuse", {Init("setup", 1), App("app", 3)});
  EXPECT_EQ(SetOf(pod.devices.at("setup").at(kResource)), (std::set<std::string>{"dev-5"}));
  EXPECT_EQ(SetOf(pod.devices.at("app").at(kResource)),
            (std::set<std::string>{"dev-3", "dev-4", "dev-5"}));
  asked = plugin_->preferred_requests();
  ASSERT_EQ(asked.size(), 3u);
  const auto& app = asked[2];
  EXPECT_EQ(app.allocation_size(), 3);
  EXPECT_EQ(SetOf({app.must_include_deviceids().begin(), app.must_include_deviceids().end()}),
            (std::set<std::string>{"dev-5"}));
  EXPECT_EQ(SetOf({app.available_deviceids().begin(), app.available_deviceids().end()}),
            (std::set<std::string>{"dev-0", "dev-1", "dev-2", "dev-3", "dev-4", "dev-5"}));
  kubelet_->FreePod("reuse");

  // An answer with an unknown id and too few: the valid one is taken, the rest picked as usual.
  plugin_->set_preference(FakePlugin::Preference::kUnknownAndLowest);
  pod = Admit("short", {App("app", 3)});
  const auto got = SetOf(pod.devices.at("app").at(kResource));
  EXPECT_EQ(got.size(), 3u);
  EXPECT_EQ(got.count("dev-0"), 1u);
  EXPECT_EQ(got.count("not-a-device"), 0u);
  kubelet_->FreePod("short");

  // A failed call fails the pod, before any Allocate call.
  plugin_->set_preference(FakePlugin::Preference::kFail);
  const auto allocations = plugin_->allocations().size();
  grpc::Status failed;
  Admit("failed", {App("app", 1)}, &failed);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(failed.error_message().find(
                "Allocate failed due to device plugin GetPreferredAllocation rpc failed with "
                "err: rpc error: code = Unavailable desc = fake plugin: no preference today"),
            std::string::npos)
      << failed.error_message();
  EXPECT_EQ(plugin_->allocations().size(), allocations);

  // Still one options call; a new registration asks again.
  EXPECT_EQ(plugin_->options_calls(), 1u);
  ASSERT_TRUE(plugin_->Register().ok());
  EXPECT_EQ(plugin_->options_calls(), 2u);
  EXPECT_EQ(kubelet_->preferred_allocation_calls(kResource), 5u);
}

}  // namespace
}  // namespace dxshim::test
