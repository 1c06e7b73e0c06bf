// libFuzzer target: the device plugin's Allocate (shim/device_plugin/device_plugin_service.h over
// plugin_slots.h and plugin_memory_units.h), called directly on the callback service. The GPUs
// are a fixed mock of a Windows node: three adapters with PnP instance ids, location paths and
// DriverStore folders as DXCore reports them, one of them gone (present: false); nothing is
// discovered. The input: its first byte picks the resource (even: pod slots, 1 to 4 per GPU by
// its next bits; odd: memory units of 1Gi), then one line per container request, its device ids
// comma separated; an item "#N" stands for the N-th advertised id, so that mutation reaches valid
// and repeated ids. Properties:
// - never crashes;
// - an unknown id, a container with no id, an id repeated in one container's list or given to
//   two containers get INVALID_ARGUMENT, never an answer; a request of known, distinct ids is
//   answered (memory units: refused, RESOURCE_EXHAUSTED, only when more units than one GPU has
//   to share);
// - an answer has one container response per request, each only the resource's annotation
//   (no mount, device, environment or CDI device: nothing built from the request reaches the
//   container), naming exactly the ids asked, every one an id derived from the inventory's GPUs,
//   and read back by CreateContainer's reader (CountPluginSlots, CountPluginMemoryUnits) as that
//   many;
// - answers are deterministic: the same request, after the pods it allocated came and went (the
//   runtime's record held them, then nothing), gets the same status and answer.
#include <grpcpp/test/default_reactor_test_peer.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "devices/allocation/device_request.h"
#include "devices/device_source.h"
#include "shim/device_plugin/device_plugin_service.h"
#include "shim/device_plugin/plugin_memory_units.h"
#include "shim/device_plugin/plugin_slots.h"

namespace {

namespace dp = dxshim::device_plugin;
namespace devices = dxshim::devices;

constexpr std::uint64_t kGi = std::uint64_t{1} << 30;

// A mock of what Windows discovery reports for a node's GPUs.
class MockWindowsGpus final : public devices::DeviceSource {
 public:
  std::string Name() const override { return "mock windows GPUs"; }
  bool Changed() override { return false; }
  std::vector<devices::Device> Load() override {
    std::vector<devices::Device> out;
    const struct {
      const char* id;
      const char* location;
      std::uint64_t memory;
      bool present;
    } gpus[] = {
        {"PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\4&2B8D0FB5&0&0018",
         "PCIROOT(0)#PCI(0300)#PCI(0000)", 16 * kGi, true},
        {"PCI\\VEN_10DE&DEV_1EB8&SUBSYS_12A210DE&REV_A1\\4&37F84D1&0&0020",
         "PCIROOT(0)#PCI(0400)#PCI(0000)", 8 * kGi, true},
        {"PCI\\VEN_1002&DEV_73BF&SUBSYS_0E3A1002&REV_C1\\6&1A2B3C4D&0&00000008",
         "PCIROOT(0)#PCI(0500)#PCI(0000)", 4 * kGi, false},
    };
    std::uint64_t luid = 0xd1a7;
    for (const auto& g : gpus) {
      devices::Device d;
      d.id = g.id;
      d.location_path = g.location;
      d.luid = luid++;
      d.vendor = d.id.find("VEN_10DE") != std::string::npos ? "NVIDIA" : "AMD";
      d.vendor_id = d.vendor == "NVIDIA" ? 0x10de : 0x1002;
      d.dedicated_memory = g.memory;
      d.driver_store =
          "C:\\Windows\\System32\\DriverStore\\FileRepository\\nv_dispi.inf_amd64_0123456789abcdef";
      d.present = g.present;
      out.push_back(d);
    }
    return out;
  }
};

const devices::DeviceSnapshot& Snapshot() {
  static const auto* snapshot =
      new devices::DeviceSnapshot(std::make_unique<MockWindowsGpus>(), devices::SnapshotOptions{});
  return *snapshot;
}

devices::AllocationPolicy Policy() {
  devices::AllocationPolicy policy;
  policy.max_containers_per_device = 4;
  return policy;
}

// One long-lived service per resource (a service's snapshot follower takes a quarter second to
// stop, too slow to make one per input); `kind` 0-3: slots, 1 to 4 per GPU; 4: memory units.
struct Plugin {
  std::unique_ptr<dp::PluginResource> resource;
  std::unique_ptr<dp::DevicePluginService> service;
  std::vector<std::string> ids;  // derived from the inventory, as the resource names them
  std::size_t most_units = 0;    // memory units: the most one present GPU has
};

Plugin& PluginFor(unsigned kind) {
  static Plugin plugins[5];
  auto* plugin = &plugins[kind];
  if (plugin->service) return *plugin;
  const auto inventory = Snapshot().Current();
  if (kind < 4) {
    plugin->resource = std::make_unique<dp::PluginSlots>(kind + 1);
    for (const auto& d : inventory->devices) {
      for (unsigned n = 0; n <= kind; ++n) plugin->ids.push_back(dp::PluginSlots::SlotId(d.id, n));
    }
  } else {
    plugin->resource = std::make_unique<dp::PluginMemoryUnits>(Policy());
    for (const auto& d : inventory->devices) {
      const auto units = dp::MemoryUnitsOf(d, Policy());
      for (unsigned n = 0; n < units; ++n)
        plugin->ids.push_back(dp::PluginMemoryUnits::UnitId(d.id, n));
      if (d.present) plugin->most_units = std::max<std::size_t>(plugin->most_units, units);
    }
  }
  plugin->service = std::make_unique<dp::DevicePluginService>(Snapshot(), *plugin->resource);
  return *plugin;
}

struct Outcome {
  grpc::StatusCode code;
  std::string message;
  std::string answer;  // the response, serialized deterministically
};

Outcome Allocate(Plugin& plugin, const v1beta1::AllocateRequest& request,
                 v1beta1::AllocateResponse& response) {
  grpc::CallbackServerContext context;
  grpc::testing::DefaultReactorTestPeer peer(&context);
  plugin.service->Allocate(&context, &request, &response);
  if (!peer.test_status_set()) std::abort();  // every call is finished
  const auto status = peer.test_status();
  Outcome out{status.error_code(), status.error_message(), {}};
  {
    google::protobuf::io::StringOutputStream stream(&out.answer);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    response.SerializeToCodedStream(&coded);
  }
  return out;
}

// The pods of `request` came and went: the runtime's record held their containers (the plugin
// then forgets the answers it gave), then nothing.
void PodsCameAndWent(Plugin& plugin, const v1beta1::AllocateRequest& request) {
  dxshim::RuntimeRecord record;
  for (const auto& c : request.container_requests()) {
    dxshim::RecordedContainer held;
    held.container_id = "c" + std::to_string(record.containers.size());
    held.sandbox_id = "s";
    held.device_ids = {Snapshot().Current()->devices.front().id};
    held.plugin_slots.assign(c.devices_ids().begin(), c.devices_ids().end());
    held.plugin_memory_units.assign(c.devices_ids().begin(), c.devices_ids().end());
    record.containers.push_back(std::move(held));
  }
  plugin.service->SetRecord(record);
  plugin.service->SetRecord({});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  spdlog::set_level(spdlog::level::off);
  if (size == 0) return 0;
  const unsigned kind = data[0] % 2 ? 4 : (data[0] >> 1) % 4;
  auto& plugin = PluginFor(kind);
  const bool memory = kind == 4;
  const std::set<std::string> inventory_ids(plugin.ids.begin(), plugin.ids.end());

  v1beta1::AllocateRequest request;
  std::istringstream lines(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  for (std::string line; std::getline(lines, line);) {
    auto* container = request.add_container_requests();
    std::stringstream items(line);
    for (std::string item; std::getline(items, item, ',');) {
      if (item.size() > 1 && item[0] == '#' && item.size() < 8 &&
          item.find_first_not_of("0123456789", 1) == std::string::npos) {
        item = plugin.ids[std::stoul(item.substr(1)) % plugin.ids.size()];
      }
      container->add_devices_ids(item);
    }
  }

  // What the request deserves, container by container: the first fault decides.
  std::optional<grpc::StatusCode> expected;
  std::set<std::string> earlier;  // the ids of the earlier containers
  for (const auto& c : request.container_requests()) {
    std::set<std::string> seen;
    bool malformed = c.devices_ids().empty();
    for (const auto& id : c.devices_ids()) {
      malformed =
          malformed || !inventory_ids.count(id) || !seen.insert(id).second || earlier.count(id) > 0;
    }
    if (malformed) {
      expected = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    }
    if (memory && seen.size() > plugin.most_units) {
      expected = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    }
    earlier.insert(seen.begin(), seen.end());
  }
  if (!expected) expected = grpc::StatusCode::OK;

  v1beta1::AllocateResponse response;
  const auto first = Allocate(plugin, request, response);
  if (first.code != *expected) std::abort();
  if (first.code != grpc::StatusCode::OK && first.message.empty()) std::abort();

  if (first.code == grpc::StatusCode::OK) {
    if (response.container_responses_size() != request.container_requests_size()) std::abort();
    for (int i = 0; i < response.container_responses_size(); ++i) {
      const auto& answer = response.container_responses(i);
      if (answer.envs_size() || answer.mounts_size() || answer.devices_size() ||
          answer.cdi_devices_size() || answer.annotations_size() != 1) {
        std::abort();
      }
      const auto it = answer.annotations().find(plugin.resource->annotation());
      if (it == answer.annotations().end()) std::abort();
      std::string asked;
      for (const auto& id : request.container_requests(i).devices_ids()) {
        if (!inventory_ids.count(id)) std::abort();
        asked += (asked.empty() ? "" : ",") + id;
      }
      if (it->second != asked) std::abort();
      const auto n = memory ? devices::CountPluginMemoryUnits(it->second)
                            : devices::CountPluginSlots(it->second);
      if (n != static_cast<unsigned>(request.container_requests(i).devices_ids_size())) {
        std::abort();
      }
    }
  }

  PodsCameAndWent(plugin, request);
  v1beta1::AllocateResponse again;
  const auto second = Allocate(plugin, request, again);
  if (second.code != first.code || second.message != first.message ||
      second.answer != first.answer) {
    std::abort();
  }
  PodsCameAndWent(plugin, request);
  return 0;
}
