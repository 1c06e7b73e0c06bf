#include "shim/ledger/runtime_record.h"

#include <sstream>

#include "devices/dxshim_keys.h"

namespace dxshim {
namespace {

// "a,b,,c" -> {a, b, c}
std::vector<std::string> CommaList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

bool HoldsDevices(const RuntimeRecord& runtime, const RecordedContainer& container) {
  return !container.exited || runtime.ready_sandboxes.count(container.sandbox_id) > 0;
}

std::size_t HoldingPods(const RuntimeRecord& runtime) {
  std::set<std::string> holding;
  for (const auto& c : runtime.containers) {
    if (HoldsDevices(runtime, c)) holding.insert(c.sandbox_id);
  }
  return holding.size();
}

RuntimeRecord ReadRuntimeRecord(const runtime::v1::ListPodSandboxResponse& sandboxes,
                                const runtime::v1::ListContainersResponse& containers) {
  RuntimeRecord record;
  for (const auto& s : sandboxes.items()) {
    // Only a sandbox the runtime says is not ready has stopped; a state this proto does not
    // know is taken as ready (freeing its devices could double-book them).
    if (s.state() != runtime::v1::SANDBOX_NOTREADY) record.ready_sandboxes.insert(s.id());
  }
  for (const auto& c : containers.containers()) {
    const auto devices = c.labels().find(keys::kDevicesLabel);
    if (devices == c.labels().end() || devices->second.empty()) continue;
    RecordedContainer r;
    r.container_id = c.id();
    r.sandbox_id = c.pod_sandbox_id();
    r.device_ids = CommaList(devices->second);
    const auto sharing = c.labels().find(keys::kSharingLabel);
    r.exclusive = sharing != c.labels().end() && sharing->second == "exclusive";
    // One in an unknown state may still run.
    r.exited = c.state() == runtime::v1::CONTAINER_EXITED;
    const auto slots = c.annotations().find(keys::kPluginSlotsAnnotation);
    if (slots != c.annotations().end()) r.plugin_slots = CommaList(slots->second);
    record.containers.push_back(std::move(r));
  }
  return record;
}

std::map<std::string, std::string> ReadSandboxHandlers(
    const runtime::v1::ListPodSandboxResponse& sandboxes) {
  std::map<std::string, std::string> handlers;
  for (const auto& s : sandboxes.items()) handlers.emplace(s.id(), s.runtime_handler());
  return handlers;
}

}  // namespace dxshim
