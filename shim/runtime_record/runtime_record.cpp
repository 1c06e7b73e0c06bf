#include "shim/runtime_record/runtime_record.h"

#include <charconv>

#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"

namespace dxshim {
namespace {

// "a,b,,c" -> {a, b, c}
std::vector<std::string> CommaList(const std::string& text) {
  std::vector<std::string> out;
  for (const auto item : SplitCommaList(text)) {
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

// "1024,2048" -> {1024, 2048}; empty when any item is not a number of bytes above zero.
std::vector<std::uint64_t> Bytes(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const auto& item : CommaList(text)) {
    std::uint64_t n = 0;
    const auto* end = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(item.data(), end, n);
    if (ec != std::errc() || ptr != end || n == 0) return {};
    out.push_back(n);
  }
  return out;
}

}  // namespace

std::optional<std::uint64_t> RecordedContainer::MemoryOn(std::size_t i) const {
  if (memory.size() == 1) return memory.front();
  if (memory.size() == device_ids.size() && i < memory.size()) return memory[i];
  return std::nullopt;
}

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
    record.pod_names[s.id()] = s.metadata().namespace_() + "/" + s.metadata().name();
    if (!s.metadata().uid().empty()) record.pod_uids[s.id()] = s.metadata().uid();
  }
  for (const auto& c : containers.containers()) {
    const auto devices = c.labels().find(keys::kDevicesLabel);
    if (devices == c.labels().end() || devices->second.empty()) continue;
    RecordedContainer r;
    r.container_id = c.id();
    r.sandbox_id = c.pod_sandbox_id();
    r.name = c.metadata().name();
    r.device_ids = CommaList(devices->second);
    // A label of blanks and commas names no device: such a container holds none (dxshim never
    // writes one, but anything with containerd's API can).
    if (r.device_ids.empty()) continue;
    const auto sharing = c.labels().find(keys::kSharingLabel);
    r.exclusive = sharing != c.labels().end() && sharing->second == keys::kExclusive;
    const auto memory = c.labels().find(keys::kGpuMemoryLabel);
    if (memory != c.labels().end()) r.memory = Bytes(memory->second);
    // One in an unknown state may still run.
    r.exited = c.state() == runtime::v1::CONTAINER_EXITED;
    const auto slots = c.annotations().find(keys::kPluginSlotsAnnotation);
    if (slots != c.annotations().end()) r.plugin_slots = CommaList(slots->second);
    const auto units = c.annotations().find(keys::kPluginMemoryUnitsAnnotation);
    if (units != c.annotations().end()) r.plugin_memory_units = CommaList(units->second);
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
