// libFuzzer target: the runtime record's reader (shim/runtime_record/runtime_record.h), which
// reads back the labels and annotations dxshim put on containers through containerd; anything
// with access to containerd can write them. The input is a list of containers, separated by
// lines "--"; in each, "exited" marks it exited, "sandbox=ID" names its sandbox (sandbox "ready"
// is ready, "stopped" is not, any other is not listed), "@KEY=VALUE" is an annotation and
// "KEY=VALUE" a label. Properties:
// - never crashes;
// - every container it records carries a dxshim.io/devices label and at least one device id, and
//   its lists hold no empty item and no item with blanks around it;
// - a record re-serialized as dxshim writes it (shim/gpu/injection.cpp: ids comma joined,
//   dxshim.io/sharing, the bytes of dxshim.io/gpu-memory, the plugin annotations) reads back
//   equal: the round trip;
// - labels and annotations it does not own are ignored: dropping them reads the same record.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "shim/base/dxshim_keys.h"
#include "shim/runtime_record/runtime_record.h"

namespace {

namespace keys = dxshim::keys;
using dxshim::RecordedContainer;
using dxshim::RuntimeRecord;

runtime::v1::ListPodSandboxResponse Sandboxes() {
  runtime::v1::ListPodSandboxResponse out;
  for (const char* id : {"ready", "stopped"}) {
    auto* s = out.add_items();
    s->set_id(id);
    s->set_state(std::string_view(id) == "ready" ? runtime::v1::SANDBOX_READY
                                                 : runtime::v1::SANDBOX_NOTREADY);
    s->mutable_metadata()->set_name(std::string("pod-") + id);
    s->mutable_metadata()->set_namespace_("default");
    s->mutable_metadata()->set_uid(std::string("uid-") + id);
  }
  return out;
}

runtime::v1::ListContainersResponse Containers(std::string_view input) {
  runtime::v1::ListContainersResponse out;
  auto* c = out.add_containers();
  std::istringstream lines{std::string(input)};
  for (std::string line; std::getline(lines, line);) {
    if (line == "--") {
      c = out.add_containers();
      c->set_id("c" + std::to_string(out.containers_size()));
      continue;
    }
    if (line == "exited") {
      c->set_state(runtime::v1::CONTAINER_EXITED);
      continue;
    }
    const auto eq = line.find('=');
    const auto key = line.substr(0, eq);
    const auto value = eq == std::string::npos ? std::string() : line.substr(eq + 1);
    if (key == "sandbox") {
      c->set_pod_sandbox_id(value);
    } else if (key.starts_with('@')) {
      (*c->mutable_annotations())[key.substr(1)] = value;
    } else {
      (*c->mutable_labels())[key] = value;
    }
  }
  return out;
}

bool Owned(const std::string& key) {
  return key == keys::kDevicesLabel || key == keys::kSharingLabel || key == keys::kGpuMemoryLabel ||
         key == keys::kPluginSlotsAnnotation || key == keys::kPluginMemoryUnitsAnnotation;
}

std::string Joined(const auto& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    if constexpr (std::is_integral_v<std::decay_t<decltype(item)>>) {
      out += std::to_string(item);
    } else {
      out += item;
    }
  }
  return out;
}

// The containers of `record` as dxshim writes them.
runtime::v1::ListContainersResponse Written(const RuntimeRecord& record) {
  runtime::v1::ListContainersResponse out;
  for (const auto& r : record.containers) {
    auto* c = out.add_containers();
    c->set_id(r.container_id);
    c->set_pod_sandbox_id(r.sandbox_id);
    c->mutable_metadata()->set_name(r.name);
    if (r.exited) c->set_state(runtime::v1::CONTAINER_EXITED);
    auto& labels = *c->mutable_labels();
    labels[keys::kDevicesLabel] = Joined(r.device_ids);
    labels[keys::kSharingLabel] = r.exclusive ? keys::kExclusive : keys::kShared;
    if (!r.memory.empty()) labels[keys::kGpuMemoryLabel] = Joined(r.memory);
    auto& annotations = *c->mutable_annotations();
    if (!r.plugin_slots.empty()) annotations[keys::kPluginSlotsAnnotation] = Joined(r.plugin_slots);
    if (!r.plugin_memory_units.empty()) {
      annotations[keys::kPluginMemoryUnitsAnnotation] = Joined(r.plugin_memory_units);
    }
  }
  return out;
}

bool Equal(const RecordedContainer& a, const RecordedContainer& b) {
  return a.container_id == b.container_id && a.sandbox_id == b.sandbox_id && a.name == b.name &&
         a.device_ids == b.device_ids && a.exclusive == b.exclusive && a.exited == b.exited &&
         a.plugin_slots == b.plugin_slots && a.plugin_memory_units == b.plugin_memory_units &&
         a.memory == b.memory;
}

bool Equal(const RuntimeRecord& a, const RuntimeRecord& b) {
  if (a.ready_sandboxes != b.ready_sandboxes || a.pod_names != b.pod_names ||
      a.pod_uids != b.pod_uids || a.containers.size() != b.containers.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.containers.size(); ++i) {
    if (!Equal(a.containers[i], b.containers[i])) return false;
  }
  return true;
}

void CheckItems(const std::vector<std::string>& items) {
  for (const auto& item : items) {
    if (item.empty() || item.front() == ' ' || item.front() == '\t' || item.back() == ' ' ||
        item.back() == '\t' || item.find(',') != std::string::npos) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto sandboxes = Sandboxes();
  const auto containers = Containers(std::string_view(reinterpret_cast<const char*>(data), size));
  const auto record = dxshim::ReadRuntimeRecord(sandboxes, containers);

  for (const auto& r : record.containers) {
    if (r.device_ids.empty()) std::abort();
    CheckItems(r.device_ids);
    CheckItems(r.plugin_slots);
    CheckItems(r.plugin_memory_units);
    for (const auto m : r.memory) {
      if (m == 0) std::abort();
    }
  }

  // The round trip.
  if (!Equal(dxshim::ReadRuntimeRecord(sandboxes, Written(record)), record)) std::abort();

  // What it does not own changes nothing.
  auto owned = containers;
  for (auto& c : *owned.mutable_containers()) {
    for (auto* map : {c.mutable_labels(), c.mutable_annotations()}) {
      for (auto it = map->begin(); it != map->end();) {
        it = Owned(it->first) ? std::next(it) : map->erase(it);
      }
    }
  }
  if (!Equal(dxshim::ReadRuntimeRecord(sandboxes, owned), record)) std::abort();

  (void)dxshim::HoldingPods(record);
  for (const auto& r : record.containers) {
    for (std::size_t i = 0; i < r.device_ids.size(); ++i) (void)r.MemoryOn(i);
  }
  return 0;
}
