#include "shim/device_plugin/device_plugin_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>

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
  follower_.reset();  // outside mutex_: a change in progress takes it
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
  spdlog::info(
      "device plugin: {}: {} {}(s), {} healthy ({} held outside the scheduler's count); "
      "telling {} watcher(s)",
      why, current_.size(), resource_.noun(), Healthy(current_), gap_.unseen, watches_.size());
  for (auto* watch : watches_) watch->Push(current_);
}

bool DevicePluginService::Admitted(grpc::CallbackServerContext* context) const {
  return !admit_ || admit_(context->peer());
}

grpc::ServerUnaryReactor* DevicePluginService::GetDevicePluginOptions(
    grpc::CallbackServerContext* context, const v1beta1::Empty*,
    v1beta1::DevicePluginOptions* response) {
  if (!Admitted(context)) return Done(context, Refused());
  // No PreStartContainer and no preferred allocation: the devices are interchangeable, the GPUs
  // are chosen at CreateContainer.
  response->set_pre_start_required(false);
  response->set_get_preferred_allocation_available(false);
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
  // Not advertised (get_preferred_allocation_available is false); answered all the same with
  // what kubelet must include, then the first available devices.
  for (const auto& container : request->container_requests()) {
    auto* out = response->add_container_responses();
    std::set<std::string> chosen;
    for (const auto& id : container.must_include_deviceids()) {
      if (chosen.insert(id).second) out->add_deviceids(id);
    }
    for (const auto& id : container.available_deviceids()) {
      if (out->deviceids_size() >= container.allocation_size()) break;
      if (chosen.insert(id).second) out->add_deviceids(id);
    }
  }
  return Done(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* DevicePluginService::Allocate(grpc::CallbackServerContext* context,
                                                        const v1beta1::AllocateRequest* request,
                                                        v1beta1::AllocateResponse* response) {
  if (!Admitted(context)) return Done(context, Refused());
  for (const auto& container : request->container_requests()) {
    std::string ids;
    for (const auto& id : container.devices_ids()) {
      if (!resource_.Known(id)) {
        return Done(context, {grpc::StatusCode::INVALID_ARGUMENT,
                              "dxshim device plugin: '" + id + "' is not one of its devices"});
      }
      ids += (ids.empty() ? "" : ",") + id;
    }
    if (ids.empty()) {
      return Done(context, {grpc::StatusCode::INVALID_ARGUMENT,
                            "dxshim device plugin: a container request without devices"});
    }
    (*response->add_container_responses()->mutable_annotations())[resource_.annotation()] = ids;
  }
  spdlog::debug("device plugin: allocated for {} container(s)", request->container_requests_size());
  return Done(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* DevicePluginService::PreStartContainer(
    grpc::CallbackServerContext* context, const v1beta1::PreStartContainerRequest*,
    v1beta1::PreStartContainerResponse*) {
  if (!Admitted(context)) return Done(context, Refused());
  return Done(context, grpc::Status::OK);
}

}  // namespace dxshim::device_plugin
