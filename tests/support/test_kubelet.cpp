#include "tests/support/test_kubelet.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace dxshim::test {

class TestKubelet::Registration final : public v1beta1::Registration::Service {
 public:
  explicit Registration(TestKubelet& kubelet) : kubelet_(kubelet) {}
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty*) override {
    {
      std::lock_guard lock(kubelet_.mutex_);
      if (kubelet_.refuse_registrations_) {
        // As kubelet's device manager answers a plugin it will not take.
        return {grpc::StatusCode::INVALID_ARGUMENT,
                "test kubelet: registration of " + request->resource_name() + " refused"};
      }
      kubelet_.requests_.push_back(*request);
    }
    kubelet_.cv_.notify_all();
    // Kubelet dials the endpoint and keeps a ListAndWatch stream open (on a thread of its own,
    // which may reach the plugin before or after this answer does).
    kubelet_.Watch(request->endpoint(), request->resource_name());
    return grpc::Status::OK;
  }

 private:
  TestKubelet& kubelet_;
};

TestKubelet::TestKubelet(std::string dir, bool start, socket_bridge::SocketFamily family)
    : dir_(std::move(dir)), family_(family) {
  if (start) Start();
}

std::string TestKubelet::TargetOf(const std::string& name) const {
  const auto path = dir_ + "/" + name;
  if (family_ == socket_bridge::SocketFamily::kUnix) return "unix://" + path;
  const auto port = socket_bridge::ReadTcpStandIn(path);
  return "ipv4:127.0.0.1:" + std::to_string(port.value_or(0));
}

TestKubelet::~TestKubelet() { Stop(); }

void TestKubelet::Start() {
  {
    std::lock_guard lock(mutex_);
    requests_at_start_ = requests_.size();
  }
  service_ = std::make_unique<Registration>(*this);
  grpc::ServerBuilder builder;
  const auto socket = dir_ + "/kubelet.sock";
  int port = 0;
  if (family_ == socket_bridge::SocketFamily::kUnix) {
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
  } else {
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  }
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) throw std::runtime_error("test kubelet: cannot serve " + socket);
  std::string error;
  if (family_ == socket_bridge::SocketFamily::kTcpStandIn &&
      !socket_bridge::WriteTcpStandIn(socket, static_cast<std::uint16_t>(port), error)) {
    throw std::runtime_error("test kubelet: " + error);
  }
}

void TestKubelet::Stop() {
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
    server_.reset();
  }
  // After the server: a Register still being answered may have started a stream meanwhile, and
  // a kubelet that stops keeps none open.
  StopWatchingAll();
  std::error_code ec;
  std::filesystem::remove(dir_ + "/kubelet.sock", ec);
}

void TestKubelet::DropPlugin(const std::string& resource) {
  // All at once: the stream ends, what it brought is forgotten, and anything it still brings is
  // ignored (it is no longer the resource's newest). The plugin registers again as soon as it
  // sees the end, and the stream that registration opens is then the one that counts.
  std::thread watcher;
  {
    std::lock_guard lock(mutex_);
    auto& plugin = plugins_[resource];
    if (plugin.watch_context) plugin.watch_context->TryCancel();
    watcher.swap(plugin.watcher);
    ++plugin.watches;
    plugin.devices.clear();
    plugin.lists = 0;
  }
  if (watcher.joinable()) watcher.join();
}

void TestKubelet::Restart(PluginSockets plugin_sockets) {
  Stop();
  if (plugin_sockets == PluginSockets::kRemoved) {
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.is_socket() || entry.path().extension() == ".sock") {
        std::filesystem::remove(entry.path());
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    for (auto& [resource, plugin] : plugins_) {
      plugin.devices.clear();
      plugin.lists = 0;
    }
  }
  Start();
}

void TestKubelet::StopWatching(const std::string& resource) {
  std::thread watcher;
  {
    std::lock_guard lock(mutex_);
    auto& plugin = plugins_[resource];
    if (plugin.watch_context) plugin.watch_context->TryCancel();
    watcher.swap(plugin.watcher);
  }
  if (watcher.joinable()) watcher.join();
}

void TestKubelet::StopWatchingAll() {
  std::vector<std::string> resources;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [resource, plugin] : plugins_) resources.push_back(resource);
  }
  for (const auto& resource : resources) StopWatching(resource);
}

void TestKubelet::Watch(std::string endpoint, std::string resource) {
  StopWatching(resource);  // a new registration replaces the previous plugin of its resource
  // Numbered, started and stored under one lock: no list of it counts, and no DropPlugin runs,
  // before it is the resource's newest stream.
  std::lock_guard lock(mutex_);
  auto& plugin = plugins_[resource];
  const auto stream = ++plugin.watches;
  auto context = std::make_shared<grpc::ClientContext>();
  plugin.watch_context = context;
  plugin.watcher = std::thread([this, endpoint, resource, context, stream] {
    auto channel = grpc::CreateChannel(TargetOf(endpoint), grpc::InsecureChannelCredentials());
    auto stub = v1beta1::DevicePlugin::NewStub(channel);
    auto reader = stub->ListAndWatch(context.get(), v1beta1::Empty());
    v1beta1::ListAndWatchResponse response;
    while (reader->Read(&response)) {
      {
        std::lock_guard list_lock(mutex_);
        auto& mine = plugins_[resource];
        if (mine.watches != stream) continue;  // a dropped stream's last words
        mine.devices.assign(response.devices().begin(), response.devices().end());
        ++mine.lists;
        WriteCheckpointLocked();
      }
      cv_.notify_all();
    }
    reader->Finish();
  });
}

std::size_t TestKubelet::RegistrationsLocked(const std::string& resource, std::size_t from) const {
  return static_cast<std::size_t>(std::count_if(
      requests_.begin() + static_cast<std::ptrdiff_t>(from), requests_.end(),
      [&](const v1beta1::RegisterRequest& r) { return r.resource_name() == resource; }));
}

std::optional<v1beta1::RegisterRequest> TestKubelet::WaitForRegistration(
    std::size_t n, std::chrono::milliseconds timeout, const std::string& resource) {
  std::unique_lock lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [&] { return RegistrationsLocked(resource, 0) >= n; })) {
    return std::nullopt;
  }
  std::size_t seen = 0;
  for (const auto& r : requests_) {
    if (r.resource_name() == resource && ++seen == n) return r;
  }
  return std::nullopt;
}

std::size_t TestKubelet::registrations(const std::string& resource) {
  std::lock_guard lock(mutex_);
  return RegistrationsLocked(resource, 0);
}

std::size_t TestKubelet::registrations_since_start(const std::string& resource) {
  std::lock_guard lock(mutex_);
  return RegistrationsLocked(resource, requests_at_start_);
}

bool TestKubelet::WaitForRegistrationSinceStart(std::chrono::milliseconds timeout,
                                                const std::string& resource) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout,
                      [&] { return RegistrationsLocked(resource, requests_at_start_) > 0; });
}

std::size_t TestKubelet::lists_received(const std::string& resource) {
  std::lock_guard lock(mutex_);
  return plugins_[resource].lists;
}

std::unique_ptr<v1beta1::DevicePlugin::Stub> TestKubelet::PluginStub(const std::string& resource) {
  std::string endpoint;
  {
    std::lock_guard lock(mutex_);
    for (const auto& r : requests_) {
      if (r.resource_name() == resource) endpoint = r.endpoint();
    }
  }
  if (endpoint.empty()) throw std::runtime_error("test kubelet: no plugin registered " + resource);
  return v1beta1::DevicePlugin::NewStub(
      grpc::CreateChannel(TargetOf(endpoint), grpc::InsecureChannelCredentials()));
}

grpc::Status TestKubelet::AllocateIds(const std::vector<std::string>& ids,
                                      v1beta1::AllocateResponse* out, const std::string& resource) {
  v1beta1::AllocateRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : ids) container->add_devices_ids(id);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return PluginStub(resource)->Allocate(&context, request, out);
}

grpc::Status TestKubelet::Allocate(unsigned count, std::map<std::string, std::string>* annotations,
                                   std::vector<std::string>* devices, const std::string& resource) {
  std::vector<std::string> chosen;
  {
    std::lock_guard lock(mutex_);
    const auto& plugin = plugins_[resource];
    for (const auto& d : plugin.devices) {
      if (chosen.size() == count) break;
      if (d.health() == "Healthy" && !plugin.allocated.count(d.id())) chosen.push_back(d.id());
    }
  }
  if (chosen.size() < count) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "test kubelet: UnexpectedAdmissionError: requested " + std::to_string(count) +
                ", available " + std::to_string(chosen.size())};
  }
  v1beta1::AllocateResponse response;
  const auto status = AllocateIds(chosen, &response, resource);
  if (!status.ok()) return status;
  if (response.container_responses_size() != 1) {
    return {grpc::StatusCode::INTERNAL, "test kubelet: not one container response"};
  }
  const auto& r = response.container_responses(0);
  annotations->insert(r.annotations().begin(), r.annotations().end());
  {
    std::lock_guard lock(mutex_);
    plugins_[resource].allocated.insert(chosen.begin(), chosen.end());
    WriteCheckpointLocked();
  }
  if (devices) *devices = chosen;
  return grpc::Status::OK;
}

void TestKubelet::Free(const std::vector<std::string>& devices, const std::string& resource) {
  std::lock_guard lock(mutex_);
  auto& plugin = plugins_[resource];
  for (const auto& d : devices) plugin.allocated.erase(d);
  WriteCheckpointLocked();
}

void TestKubelet::set_refuse_registrations(bool refuse) {
  std::lock_guard lock(mutex_);
  refuse_registrations_ = refuse;
}

namespace {

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void TestKubelet::WriteCheckpointLocked() const {
  // kubelet's format (pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go, written by
  // manager.go writeCheckpoint): RegisteredDevices holds each resource's healthy devices; one
  // PodDeviceEntries item per resource with allocations (DeviceIDs per NUMA node, -1 for none).
  // The checksum is left 0: only kubelet itself verifies it.
  std::string entries;
  std::string registered;
  for (const auto& [resource, plugin] : plugins_) {
    if (plugin.lists == 0) continue;
    std::string ids;
    for (const auto& d : plugin.devices) {
      if (d.health() == "Healthy") ids += (ids.empty() ? "" : ",") + Quoted(d.id());
    }
    registered += (registered.empty() ? "" : ",") + Quoted(resource) + ":[" + ids + "]";
    if (plugin.allocated.empty()) continue;
    std::string allocated;
    for (const auto& id : plugin.allocated)
      allocated += (allocated.empty() ? "" : ",") + Quoted(id);
    entries += std::string(entries.empty() ? "" : ",") +
               "{\"PodUID\":\"00000000-0000-0000-0000-000000000000\",\"ContainerName\":\"app\"," +
               "\"ResourceName\":" + Quoted(resource) + ",\"DeviceIDs\":{\"-1\":[" + allocated +
               "]},\"AllocResp\":\"\"}";
  }
  const std::string json = "{\"Data\":{\"PodDeviceEntries\":[" + entries +
                           "],\"RegisteredDevices\":{" + registered + "}},\"Checksum\":0}";
  const auto path = dir_ + "/kubelet_internal_checkpoint";
  {
    std::ofstream out(path + ".tmp", std::ios::binary | std::ios::trunc);
    out << json;
  }
  std::error_code ec;
  std::filesystem::rename(path + ".tmp", path, ec);
}

void PrintRestartSigns(const std::string& log, TestKubelet& kubelet) {
  const auto count = [&](const std::string& text) {
    std::size_t n = 0;
    for (auto at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
    return n;
  };
  std::printf(
      "[ measured ] restarts noticed: %zu by the end of the registration's ListAndWatch stream, "
      "%zu by a new kubelet.sock, %zu by the plugin's socket removed; %zu registrations in all\n",
      count("the ListAndWatch stream of its registration ended"), count(" is a new file)"),
      count(" was removed (kubelet restarted)"), kubelet.registrations());
}

std::size_t HealthyCount(const std::vector<v1beta1::Device>& devices) {
  return static_cast<std::size_t>(
      std::count_if(devices.begin(), devices.end(),
                    [](const v1beta1::Device& d) { return d.health() == "Healthy"; }));
}

}  // namespace dxshim::test
