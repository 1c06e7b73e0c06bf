#include "shim/device_plugin/device_plugin_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>

#include "shim/base/comma_list.h"

namespace dxshim::device_plugin {
namespace {

v1beta1::ListAndWatchResponse ToResponse(const std::vector<PluginDevice>& devices) {
  v1beta1::ListAndWatchResponse response;
  for (const auto& d : devices) {
    auto* device = response.add_devices();
    device->set_id(d.id);
    device->set_health(d.healthy ? "Healthy" : "Unhealthy");
  }
  return response;
}

std::size_t Healthy(const std::vector<PluginDevice>& devices) {
  return static_cast<std::size_t>(std::count_if(devices.begin(), devices.end(),
                                                [](const PluginDevice& d) { return d.healthy; }));
}

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context, grpc::Status status) {
  auto* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

grpc::Status Refused() {
  return {grpc::StatusCode::PERMISSION_DENIED,
          "dxshim device plugin: calls must come through its socket"};
}

// The stream a refused ListAndWatch gets: ended at once.
class RefusedWatch final : public grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse> {
 public:
  RefusedWatch() { Finish(Refused()); }
  void OnDone() override { delete this; }
};

}  // namespace

// One write in flight at a time; a newer list replaces one still waiting (kubelet only needs the
// latest). Deleted by gRPC's OnDone, after the service forgot it.
class DevicePluginService::Watch final
    : public grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse> {
 public:
  Watch(DevicePluginService& service, const std::vector<PluginDevice>& devices,
        std::uint64_t number)
      : service_(service), number_(number) {
    Push(devices);
  }

  void Push(const std::vector<PluginDevice>& devices) {
    std::lock_guard lock(mutex_);
    if (ending_) return;
    pending_ = ToResponse(devices);
    if (!writing_) WriteNextLocked();
  }

  // The service stops: finish once the write in flight (if any) is done.
  void End() {
    std::lock_guard lock(mutex_);
    if (ending_) return;
    ending_ = true;
    if (!writing_) Finish(grpc::Status::OK);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mutex_);
    writing_ = false;
    if (!ok && !ending_) {  // kubelet went away
      ending_ = true;
      Finish(grpc::Status::OK);
    } else if (ending_) {
      Finish(grpc::Status::OK);
    } else if (pending_) {
      WriteNextLocked();
    }
  }

  void OnCancel() override { End(); }

  void OnDone() override {
    // gRPC calls OnDone after every other reaction has returned, an order libgrpc keeps where
    // ThreadSanitizer cannot see it; taking the lock once more orders each earlier critical
    // section (the constructor's included) before what follows, visibly.
    { std::lock_guard lock(mutex_); }
    service_.Forget(this, number_);
    delete this;
  }

 private:
  void WriteNextLocked() {
    in_flight_ = std::move(*pending_);
    pending_.reset();
    writing_ = true;
    StartWrite(&in_flight_);
  }

  DevicePluginService& service_;
  const std::uint64_t number_;
  std::mutex mutex_;
  std::optional<v1beta1::ListAndWatchResponse> pending_;
  v1beta1::ListAndWatchResponse in_flight_;
  bool writing_ = false;
  bool ending_ = false;
};

DevicePluginService::DevicePluginService(const devices::DeviceSnapshot& snapshot,
                                         PluginResource& resource, RuntimeRecord record,
                                         PeerAdmission admit, WatchEnded watch_ended)
    : snapshot_(snapshot),
      resource_(resource),
      admit_(std::move(admit)),
      watch_ended_(std::move(watch_ended)),
      record_(std::move(record)) {
  const auto inventory = snapshot_.Current();
  current_ = resource_.Advertised(*inventory, record_, gap_);
  follower_ = std::make_unique<devices::SnapshotFollower>(snapshot_, inventory->generation,
                                                          [this](const devices::Inventory&) {
                                                            std::lock_guard lock(mutex_);
                                                            if (!stopping_)
                                                              UpdateLocked("devices changed");
                                                          });
}

DevicePluginService::~DevicePluginService() { Stop(); }

void DevicePluginService::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto* watch : watches_) watch->End();
  }
  recount_cv_.notify_all();
  if (recounter_.joinable()) recounter_.join();
  follower_.reset();  // outside mutex_: a change in progress takes it
}

void DevicePluginService::Recount() {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  UpdateLocked("kubelet allocated");
  // Kubelet writes its checkpoint after each container's allocation, and allocates a pod's
  // containers one after another: read it again once the pod's admission is over.
  recount_at_ = std::chrono::steady_clock::now() + kRecountAfterAllocate;
  if (!recounter_.joinable()) recounter_ = std::thread([this] { RecountLater(); });
  recount_cv_.notify_all();
}

void DevicePluginService::RecountLater() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!recount_at_) {
      recount_cv_.wait(lock);
    } else if (recount_cv_.wait_until(lock, *recount_at_) == std::cv_status::timeout) {
      recount_at_.reset();
      if (!stopping_) UpdateLocked("kubelet's checkpoint after an allocation");
    }
  }
}

void DevicePluginService::Forget(Watch* watch, std::uint64_t number) {
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    watches_.erase(watch);
    stopping = stopping_;
  }
  if (!stopping && watch_ended_ && number != 0) watch_ended_(number);
}

std::uint64_t DevicePluginService::watches_opened() {
  std::lock_guard lock(mutex_);
  return watches_opened_;
}

void DevicePluginService::SetRecord(RuntimeRecord record) {
  std::lock_guard lock(mutex_);
  record_ = std::move(record);
  if (!stopping_) UpdateLocked("the runtime's record changed");
}

void DevicePluginService::UpdateLocked(const char* why) {
  const auto inventory = snapshot_.Current();
  auto devices = resource_.Advertised(*inventory, record_, gap_);
  if (devices == current_) return;
  current_ = std::move(devices);
  spdlog::info("device plugin: {}: {} {}(s), {} healthy ({} withheld); telling {} watcher(s)", why,
               current_.size(), resource_.noun(), Healthy(current_), gap_.unseen, watches_.size());
  for (auto* watch : watches_) watch->Push(current_);
}

bool DevicePluginService::Admitted(grpc::CallbackServerContext* context) const {
  return !admit_ || admit_(context->peer());
}

grpc::ServerUnaryReactor* DevicePluginService::GetDevicePluginOptions(
    grpc::CallbackServerContext* context, const v1beta1::Empty*,
    v1beta1::DevicePluginOptions* response) {
  if (!Admitted(context)) return Done(context, Refused());
  // No PreStartContainer: the GPUs are chosen at CreateContainer. A preferred allocation when
  // the resource has a preference (memory units: those of the GPU with the largest fit).
  response->set_pre_start_required(false);
  response->set_get_preferred_allocation_available(resource_.prefers());
  return Done(context, grpc::Status::OK);
}

grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse>* DevicePluginService::ListAndWatch(
    grpc::CallbackServerContext* context, const v1beta1::Empty*) {
  if (!Admitted(context)) return new RefusedWatch();
  // An observer's stream (dxshim doctor's) is not numbered: only kubelet's streams' ends count.
  const bool observer = context->client_metadata().count(kObserverMetadata) > 0;
  std::lock_guard lock(mutex_);
  auto* watch = new Watch(*this, current_, observer ? 0 : ++watches_opened_);
  watches_.insert(watch);
  if (stopping_) watch->End();
  spdlog::info("device plugin: {} is watching: {} {}(s), {} healthy",
               observer ? "an observer" : "kubelet", current_.size(), resource_.noun(),
               Healthy(current_));
  return watch;
}

grpc::ServerUnaryReactor* DevicePluginService::GetPreferredAllocation(
    grpc::CallbackServerContext* context, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* response) {
  if (!Admitted(context)) return Done(context, Refused());
  for (const auto& container : request->container_requests()) {
    const std::vector<std::string> available(container.available_deviceids().begin(),
                                             container.available_deviceids().end());
    const std::vector<std::string> must(container.must_include_deviceids().begin(),
                                        container.must_include_deviceids().end());
    const auto size = static_cast<std::size_t>(std::max(container.allocation_size(), 0));
    auto* out = response->add_container_responses();
    for (const auto& id : resource_.Preferred(available, must, size)) out->add_deviceids(id);
  }
  return Done(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* DevicePluginService::Allocate(grpc::CallbackServerContext* context,
                                                        const v1beta1::AllocateRequest* request,
                                                        v1beta1::AllocateResponse* response) {
  if (!Admitted(context)) return Done(context, Refused());
  // A request kubelet would not make is INVALID_ARGUMENT: an id not ours, a container with none,
  // an id twice in one container or in two (kubelet gives a device to one container at a time).
  // RESOURCE_EXHAUSTED is only for what the resource cannot give (PluginResource::Refusal).
  const auto malformed = [&](const std::string& why) {
    spdlog::warn("device plugin: refused kubelet's allocation: {}", why);
    return Done(context, {grpc::StatusCode::INVALID_ARGUMENT, "dxshim device plugin: " + why});
  };
  std::set<std::string> earlier;  // the ids of the request's earlier containers
  for (const auto& container : request->container_requests()) {
    std::set<std::string> mine;
    for (const auto& id : container.devices_ids()) {
      if (!resource_.Known(id)) return malformed("'" + id + "' is not one of its devices");
      if (!mine.insert(id).second) return malformed("'" + id + "' is given twice to one container");
      if (earlier.count(id)) return malformed("'" + id + "' is given to two containers");
    }
    if (mine.empty()) return malformed("a container request without devices");
    earlier.insert(mine.begin(), mine.end());
    const std::vector<std::string> given(container.devices_ids().begin(),
                                         container.devices_ids().end());
    if (const auto why = resource_.Refusal(given); !why.empty()) {
      spdlog::warn("device plugin: refused kubelet's allocation: {}", why);
      return Done(context, {grpc::StatusCode::RESOURCE_EXHAUSTED, "dxshim device plugin: " + why});
    }
    (*response->add_container_responses()->mutable_annotations())[resource_.annotation()] =
        JoinCommaList(given);
  }
  for (const auto& container : request->container_requests()) {
    resource_.Allocated({container.devices_ids().begin(), container.devices_ids().end()});
  }
  spdlog::debug("device plugin: allocated for {} container(s)", request->container_requests_size());
  Recount();
  return Done(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* DevicePluginService::PreStartContainer(
    grpc::CallbackServerContext* context, const v1beta1::PreStartContainerRequest*,
    v1beta1::PreStartContainerResponse*) {
  if (!Admitted(context)) return Done(context, Refused());
  return Done(context, grpc::Status::OK);
}

}  // namespace dxshim::device_plugin
