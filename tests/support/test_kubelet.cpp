#include "tests/support/test_kubelet.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace dxshim::test {
namespace {

// Kubelet waits at most 10 s to dial a plugin (plugin/v1beta1/client.go dial) and calls it without
// a deadline after that; a test stand-in does not wait for ever.
constexpr auto kCallTimeout = std::chrono::seconds(10);

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + kCallTimeout;
}

// The name Go gives a gRPC code (codes.Code's String), as kubelet's error texts print it.
std::string GoCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "Canceled";
    case grpc::StatusCode::UNKNOWN:
      return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FailedPrecondition";
    case grpc::StatusCode::ABORTED:
      return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "Unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "Internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "Unavailable";
    case grpc::StatusCode::DATA_LOSS:
      return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "Unauthenticated";
    default:
      return "Code(" + std::to_string(static_cast<int>(code)) + ")";
  }
}

// How Go prints the error of a failed gRPC call (grpc-go's status.Error).
std::string GoRpcError(const grpc::Status& status) {
  return "rpc error: code = " + GoCodeName(status.error_code()) +
         " desc = " + status.error_message();
}

// Go's %q of a string (strconv.Quote) for the printable ASCII kubelet's texts quote here.
std::string GoQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The answer of an admission kubelet refuses: the topology manager's admit handler turns the
// device manager's error into reason UnexpectedAdmissionError and this message
// (pkg/kubelet/cm/admission/errors.go GetPodAdmitResult, unexpectedAdmissionError.Error).
grpc::Status Unexpected(grpc::StatusCode code, const std::string& error) {
  return {code, "test kubelet: UnexpectedAdmissionError: Allocate failed due to " + error +
                    ", which is unexpected"};
}

// A string as Go's encoding/json writes it (the checkpoint is json.Marshal's): " and \ escaped,
// \n \r \t by name, other control characters and < > & as \u00XX (HTML-safe by default), U+2028
// and U+2029 as \u2028 and \u2029, bytes that are not UTF-8 as \ufffd.
std::string JsonString(const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (b == '"' || b == '\\') {
        out += '\\';
        out += static_cast<char>(b);
      } else if (b == '\n') {
        out += "\\n";
      } else if (b == '\r') {
        out += "\\r";
      } else if (b == '\t') {
        out += "\\t";
      } else if (b < 0x20 || b == '<' || b == '>' || b == '&') {
        out += "\\u00";
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
      } else {
        out += static_cast<char>(b);
      }
      ++i;
      continue;
    }
    // A multi-byte UTF-8 sequence: its length from the lead byte, then its continuation bytes
    // and its code point's range checked.
    std::size_t length = 0;
    std::uint32_t point = 0;
    if ((b & 0xE0) == 0xC0) {
      length = 2;
      point = b & 0x1Fu;
    } else if ((b & 0xF0) == 0xE0) {
      length = 3;
      point = b & 0x0Fu;
    } else if ((b & 0xF8) == 0xF0) {
      length = 4;
      point = b & 0x07u;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      valid = (c & 0xC0) == 0x80;
      point = (point << 6) | (c & 0x3Fu);
    }
    static constexpr std::uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && point >= kLeast[length] && point <= 0x10FFFF &&
            !(point >= 0xD800 && point <= 0xDFFF);
    if (!valid) {
      out += "\\ufffd";
      ++i;
    } else if (point == 0x2028 || point == 0x2029) {
      out += point == 0x2028 ? "\\u2028" : "\\u2029";
      i += length;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out + "\"";
}

// Standard base64 with padding: how Go's encoding/json writes a []byte (AllocResp).
std::string Base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                            std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == bytes.size()) {
    const std::uint32_t n = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

// A message's bytes with map entries in key order, as kubelet's (gogo-generated) Marshal writes
// them for AllocResp.
std::string Deterministic(const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

template <typename T>
void Shuffle(std::vector<T>& items, std::mt19937& random) {
  // Fisher-Yates with mt19937's own draws (its output is fixed by the standard; the standard
  // library's distributions and std::shuffle are not), so that a seed picks the same everywhere.
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(random() % i);
    std::swap(items[i - 1], items[j]);
  }
}

std::set<std::string> IdsOf(const std::map<std::int64_t, std::vector<std::string>>& per_node) {
  std::set<std::string> ids;
  for (const auto& [node, list] : per_node) ids.insert(list.begin(), list.end());
  return ids;
}

}  // namespace

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
    // Before answering, kubelet dials the plugin's endpoint and asks its options, once per
    // registration (plugin/v1beta1/server.go Register -> handler.go connectClient -> client.go
    // Connect -> manager.go PluginConnected, which keeps them with the endpoint; the options in
    // the RegisterRequest are not read). A failure there is Register's answer, a plain Go error,
    // hence UNKNOWN. Then it reads the ListAndWatch stream on a goroutine of its own
    // (handler.go runClient, client.go Run), which may reach the plugin before or after this
    // answer does.
    v1beta1::DevicePluginOptions options;
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    context.set_wait_for_ready(true);  // grpc.WithBlock: the dial waits for the socket
    {
      std::lock_guard lock(kubelet_.mutex_);
      kubelet_.connecting_.insert(&context);
    }
    const auto asked =
        kubelet_.StubOf(request->endpoint())->GetDevicePluginOptions(&context, {}, &options);
    {
      std::lock_guard lock(kubelet_.mutex_);
      kubelet_.connecting_.erase(&context);
    }
    if (!asked.ok()) {
      return {grpc::StatusCode::UNKNOWN,
              "failed to get device plugin options: " + GoRpcError(asked)};
    }
    kubelet_.Watch(request->endpoint(), request->resource_name(), options);
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

std::unique_ptr<v1beta1::DevicePlugin::Stub> TestKubelet::StubOf(
    const std::string& endpoint) const {
  return v1beta1::DevicePlugin::NewStub(
      grpc::CreateChannel(TargetOf(endpoint), grpc::InsecureChannelCredentials()));
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
    {
      // A registration still asking its plugin's options gives up (the server waits for it).
      std::lock_guard lock(mutex_);
      for (auto* context : connecting_) context->TryCancel();
    }
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
  // sees the end, and the stream that registration opens is then the one that counts. The
  // resource stays registered with no healthy device (manager.go PluginDisconnected).
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
    // A new kubelet knows no plugin until one registers; it reads the pods' devices and the
    // registered resources back from its checkpoint, each resource with no healthy device
    // (manager.go readCheckpoint): `pods_` and `registered` stay.
    std::lock_guard lock(mutex_);
    for (auto& [resource, plugin] : plugins_) {
      plugin.devices.clear();
      plugin.lists = 0;
      plugin.endpoint.clear();
      plugin.options.reset();
      plugin.stream_ended = false;
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
    ++plugin.watches;  // ended by kubelet, not by the plugin
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

void TestKubelet::Watch(std::string endpoint, std::string resource,
                        v1beta1::DevicePluginOptions options) {
  StopWatching(resource);  // a new registration replaces the previous plugin of its resource
  // Numbered, started and stored under one lock: no list of it counts, and no DropPlugin runs,
  // before it is the resource's newest stream.
  std::lock_guard lock(mutex_);
  auto& plugin = plugins_[resource];
  const auto stream = ++plugin.watches;
  plugin.endpoint = endpoint;
  plugin.options = std::move(options);
  plugin.stream_ended = false;
  auto context = std::make_shared<grpc::ClientContext>();
  plugin.watch_context = context;
  plugin.watcher = std::thread([this, endpoint, resource, context, stream] {
    auto stub = StubOf(endpoint);
    auto reader = stub->ListAndWatch(context.get(), v1beta1::Empty());
    v1beta1::ListAndWatchResponse response;
    while (reader->Read(&response)) {
      {
        // Each list replaces the resource's devices, healthy and unhealthy, and is checkpointed
        // (manager.go PluginListAndWatchReceiver, genericDeviceUpdateCallback).
        std::lock_guard list_lock(mutex_);
        auto& mine = plugins_[resource];
        if (mine.watches != stream) continue;  // a dropped stream's last words
        mine.devices.assign(response.devices().begin(), response.devices().end());
        ++mine.lists;
        mine.registered = true;
        WriteCheckpointLocked();
      }
      cv_.notify_all();
    }
    reader->Finish();
    // The plugin ended its stream: kubelet marks every device of the resource unhealthy
    // (handler.go runClient -> client.go Disconnect -> manager.go PluginDisconnected,
    // markResourceUnhealthy) until a new registration lists them again.
    std::lock_guard end_lock(mutex_);
    auto& mine = plugins_[resource];
    if (mine.watches == stream) mine.stream_ended = true;
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

std::optional<v1beta1::DevicePluginOptions> TestKubelet::PluginOptions(
    const std::string& resource) {
  std::lock_guard lock(mutex_);
  const auto it = plugins_.find(resource);
  return it == plugins_.end() ? std::nullopt : it->second.options;
}

std::size_t TestKubelet::preferred_allocation_calls(const std::string& resource) {
  std::lock_guard lock(mutex_);
  const auto it = plugins_.find(resource);
  return it == plugins_.end() ? 0 : it->second.preferred_calls;
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
  return StubOf(endpoint);
}

grpc::Status TestKubelet::AllocateIds(const std::vector<std::string>& ids,
                                      v1beta1::AllocateResponse* out, const std::string& resource) {
  v1beta1::AllocateRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : ids) container->add_devices_ids(id);
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  return PluginStub(resource)->Allocate(&context, request, out);
}

std::vector<std::string> TestKubelet::RandomOrder(const std::set<std::string>& ids) {
  std::vector<std::string> out(ids.begin(), ids.end());
  Shuffle(out, picks_);
  return out;
}

std::size_t TestKubelet::Available(const std::string& resource) {
  std::lock_guard lock(mutex_);
  const auto allocated = AllocatedLocked(resource);
  std::size_t n = 0;
  for (const auto& id : HealthyLocked(resource)) n += allocated.count(id) ? 0u : 1u;
  return n;
}

std::set<std::string> TestKubelet::HealthyLocked(const std::string& resource) const {
  std::set<std::string> healthy;
  const auto it = plugins_.find(resource);
  if (it == plugins_.end() || it->second.stream_ended) return healthy;
  for (const auto& d : it->second.devices) {
    if (d.health() == "Healthy") healthy.insert(d.id());
  }
  return healthy;
}

std::set<std::string> TestKubelet::AllocatedLocked(const std::string& resource) const {
  // What kubelet counts in use: every device of the resource in its pods' entries, a rejected
  // pod's too until they are dropped (manager.go allocatedDevices, pod_devices.go devices).
  std::set<std::string> allocated;
  for (const auto& [uid, pod] : pods_) {
    for (const auto& [name, resources] : pod.containers) {
      const auto it = resources.find(resource);
      if (it == resources.end()) continue;
      const auto ids = IdsOf(it->second.ids);
      allocated.insert(ids.begin(), ids.end());
    }
  }
  return allocated;
}

bool TestKubelet::IsDevicePluginResourceLocked(const std::string& resource) const {
  // A resource kubelet has devices of (a list came) or has allocated (manager.go
  // isDevicePluginResource); any other limit is not the device manager's, and the predicate
  // admit handler that runs next drops it too (pkg/kubelet/lifecycle/predicate.go
  // removeMissingExtendedResources): the pod is admitted without such devices.
  const auto it = plugins_.find(resource);
  if (it != plugins_.end() && it->second.registered) return true;
  for (const auto& [uid, pod] : pods_) {
    for (const auto& [name, resources] : pod.containers) {
      if (resources.count(resource)) return true;
    }
  }
  return false;
}

void TestKubelet::DropRejectedPodsLocked(const std::string& admitting) {
  // manager.go UpdateAllocatedDevices, at the first device plugin resource of each container:
  // the pods that are neither active nor the one being admitted lose their devices. A rejected
  // pod is never active; it stays the pod being admitted (setPodPendingAdmission) until another
  // pod's admission begins.
  std::erase_if(pods_,
                [&](const auto& item) { return item.second.rejected && item.first != admitting; });
}

grpc::Status TestKubelet::DevicesToAllocate(const std::string& uid, const std::string& container,
                                            const std::string& resource, unsigned required,
                                            const std::set<std::string>& reusable,
                                            std::set<std::string>* chosen) {
  // manager.go devicesToAllocate, in its order. Its first checks (the resource registered, some
  // device healthy, a container's earlier devices all still healthy, before the count: issue
  // #109595) are those of the later v1.26-era sources; earlier ones return at once for a
  // container that has its devices and check only the registration. The newest sources also
  // return at once for a container found running after a kubelet restart
  // (isContainerAlreadyRunning, issue #118559): not stood in for, this kubelet's sources are
  // always ready.
  std::unique_lock lock(mutex_);
  std::optional<std::set<std::string>> had;  // the container's devices already (a re-admission)
  if (const auto pod = pods_.find(uid); pod != pods_.end()) {
    if (const auto c = pod->second.containers.find(container); c != pod->second.containers.end()) {
      if (const auto e = c->second.find(resource); e != c->second.end()) {
        had = IdsOf(e->second.ids);
      }
    }
  }
  if (had && had->size() != required) {
    return Unexpected(grpc::StatusCode::FAILED_PRECONDITION,
                      "pod " + GoQuoted(uid) + " container " + GoQuoted(container) +
                          " changed request for resource " + GoQuoted(resource) + " from " +
                          std::to_string(had->size()) + " to " + std::to_string(required));
  }
  const auto plugin = plugins_.find(resource);
  if (plugin == plugins_.end() || !plugin->second.registered) {
    return Unexpected(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "cannot allocate unregistered device " + resource);
  }
  const auto healthy = HealthyLocked(resource);
  if (healthy.empty()) {
    return Unexpected(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "no healthy devices present; cannot allocate unhealthy devices " + resource);
  }
  if (had && !std::includes(healthy.begin(), healthy.end(), had->begin(), had->end())) {
    return Unexpected(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "previously allocated devices are no longer healthy; cannot allocate "
                      "unhealthy devices " +
                          resource);
  }
  chosen->clear();
  if (had || required == 0) return grpc::Status::OK;  // nothing to allocate, no Allocate call

  // Devices are taken from a set in Go's iteration order (allocateRemainingFrom): random.
  unsigned needed = required;
  const auto take_from = [&](const std::set<std::string>& from) {
    for (const auto& id : RandomOrder(from)) {
      if (!chosen->insert(id).second) continue;
      if (--needed == 0) return true;
    }
    return false;
  };
  // The devices an init container of the pod had first.
  if (take_from(reusable)) return grpc::Status::OK;
  auto in_use = AllocatedLocked(resource);
  in_use.insert(chosen->begin(), chosen->end());
  std::set<std::string> available;
  std::set_difference(healthy.begin(), healthy.end(), in_use.begin(), in_use.end(),
                      std::inserter(available, available.end()));
  if (available.size() < needed) {
    return Unexpected(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "requested number of devices unavailable for " + resource +
                          ". Requested: " + std::to_string(needed) +
                          ", Available: " + std::to_string(available.size()));
  }
  // With the topology manager's policy `none` there is no NUMA hint: filterByAffinity puts every
  // available device in its "no affinity" set, and the plugin is asked for a preference over all
  // of them (callGetPreferredAllocationIfAvailable, only when its options at registration said
  // get_preferred_allocation_available): the available devices and those already taken from
  // the reusable ones, which it must include, for the container's whole count. Its answer is
  // read as a set: ids that are not available are ignored, a short answer is completed from the
  // available devices in a random order, a long one is cut in a random order. A failed call
  // fails the admission.
  if (plugin->second.options && plugin->second.options->get_preferred_allocation_available()) {
    v1beta1::PreferredAllocationRequest request;
    auto* ask = request.add_container_requests();
    auto offered = available;
    offered.insert(chosen->begin(), chosen->end());
    for (const auto& id : RandomOrder(offered)) ask->add_available_deviceids(id);
    for (const auto& id : RandomOrder(*chosen)) ask->add_must_include_deviceids(id);
    ask->set_allocation_size(static_cast<std::int32_t>(required));
    ++plugin->second.preferred_calls;
    const auto endpoint = plugin->second.endpoint;
    lock.unlock();  // as kubelet lets go of its mutex for the call
    v1beta1::PreferredAllocationResponse response;
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    const auto status = StubOf(endpoint)->GetPreferredAllocation(&context, request, &response);
    lock.lock();
    if (!status.ok()) {
      return Unexpected(
          status.error_code(),
          "device plugin GetPreferredAllocation rpc failed with err: " + GoRpcError(status));
    }
    std::set<std::string> preferred;
    if (response.container_responses_size() > 0) {
      for (const auto& id : response.container_responses(0).deviceids()) {
        if (available.count(id)) preferred.insert(id);
      }
    }
    if (take_from(preferred)) return grpc::Status::OK;
  }
  if (take_from(available)) return grpc::Status::OK;
  return Unexpected(grpc::StatusCode::INTERNAL,
                    "unexpectedly allocated less resources than required. Requested: " +
                        std::to_string(required) + ", Got: " + std::to_string(required - needed));
}

grpc::Status TestKubelet::AllocateContainer(
    const std::string& uid, const ContainerAsk& container,
    std::map<std::string, std::set<std::string>>& reusable) {
  // manager.go allocateContainerResources: the container's limits are a Go map, read in a
  // random order; each device plugin resource gets its devices and one Allocate call of its
  // own, whose first container answer is kept (pod_devices.go insert); the checkpoint is written
  // once the container has all of them. An error returns at once, the resources done before it
  // staying the pod's.
  std::set<std::string> names;
  for (const auto& [resource, count] : container.limits) names.insert(resource);
  bool collected = false;
  bool allocated_any = false;
  for (const auto& resource : RandomOrder(names)) {
    {
      std::lock_guard lock(mutex_);
      if (!IsDevicePluginResourceLocked(resource)) continue;
      if (!collected) DropRejectedPodsLocked(uid);
      collected = true;
    }
    std::set<std::string> chosen;
    auto status = DevicesToAllocate(uid, container.name, resource, container.limits.at(resource),
                                    reusable[resource], &chosen);
    if (!status.ok()) return status;
    if (chosen.empty()) continue;
    allocated_any = true;
    std::string endpoint;
    {
      std::lock_guard lock(mutex_);
      endpoint = plugins_[resource].endpoint;
    }
    if (endpoint.empty()) {
      return Unexpected(grpc::StatusCode::UNAVAILABLE, "unknown Device Plugin " + resource);
    }
    // The ids from a set again (allocDevices.UnsortedList()): a random order.
    const auto ids = RandomOrder(chosen);
    v1beta1::AllocateRequest request;
    auto* ask = request.add_container_requests();
    for (const auto& id : ids) ask->add_devices_ids(id);
    v1beta1::AllocateResponse response;
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    status = StubOf(endpoint)->Allocate(&context, request, &response);
    if (!status.ok()) return Unexpected(status.error_code(), GoRpcError(status));
    if (response.container_responses_size() == 0) {
      return Unexpected(
          grpc::StatusCode::INTERNAL,
          "no containers return in allocation response {" + response.ShortDebugString() + "}");
    }
    std::lock_guard lock(mutex_);
    Entry entry;
    entry.requested = ids;
    entry.response = response.container_responses(0);
    // Each id under every NUMA node of its device in the latest list, -1 when none.
    for (const auto& id : ids) {
      const auto& listed = plugins_[resource].devices;
      const auto d = std::find_if(listed.begin(), listed.end(),
                                  [&](const v1beta1::Device& x) { return x.id() == id; });
      if (d == listed.end() || d->topology().nodes().empty()) {
        entry.ids[-1].push_back(id);
        continue;
      }
      for (const auto& node : d->topology().nodes()) entry.ids[node.id()].push_back(id);
    }
    pods_[uid].containers[container.name][resource] = std::move(entry);
  }
  if (allocated_any) {
    std::lock_guard lock(mutex_);
    WriteCheckpointLocked();
  }
  return grpc::Status::OK;
}

grpc::Status TestKubelet::AdmitPod(const std::string& uid,
                                   const std::vector<ContainerAsk>& containers, PodAdmission* out) {
  std::lock_guard admit(admit_mutex_);
  out->uid = uid;
  out->annotations.clear();
  out->devices.clear();
  std::set<std::string> names;
  for (const auto& c : containers) {
    if (!names.insert(c.name).second) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "test kubelet: pod " + uid + " has two containers named " + c.name};
    }
  }
  // Init containers first, in their order, then the app containers
  // (pkg/kubelet/cm/topologymanager/scope.go admitPolicyNone: the device manager's Allocate for
  // each container of append(InitContainers, Containers), the first error failing the pod).
  std::vector<const ContainerAsk*> order;
  for (const auto& c : containers) {
    if (c.init) order.push_back(&c);
  }
  for (const auto& c : containers) {
    if (!c.init) order.push_back(&c);
  }
  // manager.go Allocate: the pod's reusable devices by resource (devicesToReuse). An init
  // container's devices join them (pod_devices.go addContainerAllocatedResources: they are free
  // again once it has run), an app container's leave them (removeContainerAllocatedResources).
  // Upstream after v1.26 a restartable init container (a sidecar, v1.28) counts as an app
  // container here.
  std::map<std::string, std::set<std::string>> reusable;
  for (const auto* c : order) {
    const auto status = AllocateContainer(uid, *c, reusable);
    std::lock_guard lock(mutex_);
    const auto pod = pods_.find(uid);
    if (!status.ok()) {
      // Nothing is undone: the containers done before keep their entries (and the checkpoint
      // lists them) until the next admission of another pod drops the rejected pod.
      if (pod != pods_.end()) pod->second.rejected = true;
      return status;
    }
    if (pod == pods_.end()) continue;
    const auto mine = pod->second.containers.find(c->name);
    if (mine == pod->second.containers.end()) continue;
    for (const auto& [resource, entry] : mine->second) {
      for (const auto& id : IdsOf(entry.ids)) {
        if (c->init) {
          reusable[resource].insert(id);
        } else {
          reusable[resource].erase(id);
        }
      }
    }
  }
  std::lock_guard lock(mutex_);
  const auto pod = pods_.find(uid);
  if (pod != pods_.end()) pod->second.rejected = false;
  for (const auto* c : order) {
    auto& annotations = out->annotations[c->name];
    if (pod == pods_.end()) continue;
    const auto mine = pod->second.containers.find(c->name);
    if (mine == pod->second.containers.end()) continue;
    // Every resource's answer merged, the first of a key kept (pod_devices.go
    // deviceRunContainerOptions; its resources come in Go's map order, here in name order).
    for (const auto& [resource, entry] : mine->second) {
      annotations.insert(entry.response.annotations().begin(), entry.response.annotations().end());
      out->devices[c->name][resource] = entry.requested;
    }
  }
  return grpc::Status::OK;
}

grpc::Status TestKubelet::Allocate(unsigned count, std::map<std::string, std::string>* annotations,
                                   std::vector<std::string>* devices, const std::string& resource) {
  std::string uid;
  {
    std::lock_guard admit(admit_mutex_);
    char text[40];
    std::snprintf(text, sizeof text, "d5c1a0c0-7e57-4000-8000-%012llx",
                  static_cast<unsigned long long>(++pods_made_));
    uid = text;
  }
  PodAdmission admission;
  const auto status = AdmitPod(uid, {{"app", false, {{resource, count}}}}, &admission);
  if (!status.ok()) return status;
  const auto& given = admission.annotations["app"];
  annotations->insert(given.begin(), given.end());
  if (devices) *devices = admission.devices["app"][resource];
  return grpc::Status::OK;
}

void TestKubelet::Free(const std::vector<std::string>& devices, const std::string& resource) {
  std::lock_guard lock(mutex_);
  const std::set<std::string> freed(devices.begin(), devices.end());
  for (auto pod = pods_.begin(); pod != pods_.end();) {
    auto& containers = pod->second.containers;
    for (auto c = containers.begin(); c != containers.end();) {
      if (const auto e = c->second.find(resource); e != c->second.end()) {
        auto& entry = e->second;
        std::erase_if(entry.requested, [&](const std::string& id) { return freed.count(id); });
        for (auto node = entry.ids.begin(); node != entry.ids.end();) {
          std::erase_if(node->second, [&](const std::string& id) { return freed.count(id); });
          node = node->second.empty() ? entry.ids.erase(node) : std::next(node);
        }
        if (entry.ids.empty()) c->second.erase(e);
      }
      c = c->second.empty() ? containers.erase(c) : std::next(c);
    }
    pod = containers.empty() ? pods_.erase(pod) : std::next(pod);
  }
  WriteCheckpointLocked();
}

void TestKubelet::FreePod(const std::string& uid) {
  std::lock_guard lock(mutex_);
  pods_.erase(uid);
  WriteCheckpointLocked();
}

void TestKubelet::set_seed(std::uint32_t seed) {
  std::lock_guard admit(admit_mutex_);
  picks_.seed(seed);
}

void TestKubelet::set_refuse_registrations(bool refuse) {
  std::lock_guard lock(mutex_);
  refuse_registrations_ = refuse;
}

void TestKubelet::WriteCheckpointLocked() {
  // kubelet's format (checkpoint/checkpoint.go Data{Data: checkpointData{PodDeviceEntries,
  // RegisteredDevices}, Checksum}, json.Marshal'd; manager.go writeCheckpoint,
  // pod_devices.go toCheckpointData):
  // - PodDeviceEntries: one item per pod UID, container name and resource, in Go's map order
  //   (random), with DeviceIDs by NUMA node (-1: none) and AllocResp, the plugin's answer for
  //   that container in protobuf bytes (base64 in JSON); null when there are none (a nil slice).
  // - RegisteredDevices: each registered resource's healthy devices, in Go's set order (random).
  // Go writes map keys sorted. The checksum is left 0: only kubelet itself verifies it (an FNV
  // hash of a Go printing of Data). Kubelet's newest sources add a BootID next to Data; v1.26
  // writes none.
  std::vector<std::string> entries;
  for (const auto& [uid, pod] : pods_) {
    for (const auto& [container, resources] : pod.containers) {
      for (const auto& [resource, entry] : resources) {
        std::map<std::string, std::vector<std::string>> by_node;  // Go sorts the keys as text
        for (const auto& [node, ids] : entry.ids) by_node[std::to_string(node)] = ids;
        std::string numa;
        for (auto& [node, ids] : by_node) {
          Shuffle(ids, checkpoint_order_);
          std::string list;
          for (const auto& id : ids) list += (list.empty() ? "" : ",") + JsonString(id);
          numa += (numa.empty() ? "" : ",") + JsonString(node) + ":[" + list + "]";
        }
        entries.push_back("{\"PodUID\":" + JsonString(uid) +
                          ",\"ContainerName\":" + JsonString(container) +
                          ",\"ResourceName\":" + JsonString(resource) + ",\"DeviceIDs\":{" + numa +
                          "},\"AllocResp\":\"" + Base64(Deterministic(entry.response)) + "\"}");
      }
    }
  }
  Shuffle(entries, checkpoint_order_);
  std::string pod_entries;
  for (const auto& e : entries) pod_entries += (pod_entries.empty() ? "" : ",") + e;
  std::string registered;
  for (const auto& [resource, plugin] : plugins_) {
    if (!plugin.registered) continue;
    const auto healthy = HealthyLocked(resource);
    std::vector<std::string> ids(healthy.begin(), healthy.end());
    Shuffle(ids, checkpoint_order_);
    std::string list;
    for (const auto& id : ids) list += (list.empty() ? "" : ",") + JsonString(id);
    registered += (registered.empty() ? "" : ",") + JsonString(resource) + ":[" + list + "]";
  }
  const std::string json = "{\"Data\":{\"PodDeviceEntries\":" +
                           (entries.empty() ? std::string("null") : "[" + pod_entries + "]") +
                           ",\"RegisteredDevices\":{" + registered + "}},\"Checksum\":0}";
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
