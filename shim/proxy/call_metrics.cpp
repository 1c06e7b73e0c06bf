#include "shim/proxy/call_metrics.h"

#include <mutex>

#include "shim/proxy/status_code_name.h"

namespace dxshim {
namespace {

// 50 µs (a relayed Version) to 10 s (a slow image pull or a CreateContainer on a loaded node).
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3,
      50e-3, 100e-3, 250e-3, 500e-3, 1.0,  2.5,    5.0,  10.0};
  return buckets;
}

// "/runtime.v1.RuntimeService/Version" -> {"runtime.v1.RuntimeService", "Version"}; false for
// anything that is not a method of a runtime.v1 service.
bool Split(std::string_view method, std::string_view& service, std::string_view& name) {
  if (!method.starts_with("/runtime.v1.")) return false;
  const auto slash = method.find('/', 1);
  if (slash == std::string_view::npos || slash + 1 == method.size()) return false;
  service = method.substr(1, slash - 1);
  name = method.substr(slash + 1);
  return name.find('/') == std::string_view::npos;
}

}  // namespace

CallMetrics::CallMetrics(prometheus::Registry& registry)
    : calls_(prometheus::BuildCounter()
                 .Name("dxshim_cri_calls_total")
                 .Help("CRI calls dxshim answered, by service, method and gRPC status code")
                 .Register(registry)),
      duration_(prometheus::BuildHistogram()
                    .Name("dxshim_cri_call_duration_seconds")
                    .Help("Time from accepting a CRI call to answering it, by service and method "
                          "(the runtime's time included)")
                    .Register(registry)) {}

CallMetrics::Method& CallMetrics::Add(std::string_view method) {
  std::string_view service = "other";
  std::string_view name = "other";
  if (!method.empty()) Split(method, service, name);
  auto m = std::make_unique<Method>();
  m->labels = {{"service", std::string(service)}, {"method", std::string(name)}};
  m->duration = &duration_.Add(m->labels, LatencyBuckets());
  auto* added = m.get();
  methods_.emplace(std::string(method), std::move(m));
  return *added;
}

CallMetrics::Method& CallMetrics::Find(std::string_view method) {
  std::string_view service;
  std::string_view name;
  {
    std::shared_lock lock(mutex_);
    const auto it = methods_.find(method);
    if (it != methods_.end()) return *it->second;
    // Not a CRI method, or too many already: the shared "other" series.
    const bool other = !Split(method, service, name) || methods_.size() >= kMaxMethods;
    if (other && other_ != nullptr) return *other_;
    if (other) method = "";
  }
  std::unique_lock lock(mutex_);
  const auto it = methods_.find(method);
  if (it != methods_.end()) return *it->second;
  auto& added = Add(method);
  if (method.empty()) other_ = &added;
  return added;
}

void CallMetrics::Record(std::string_view method, grpc::StatusCode code,
                         std::chrono::steady_clock::duration elapsed) {
  auto& m = Find(method);
  auto index = static_cast<std::size_t>(code);
  if (index >= kCodes) index = static_cast<std::size_t>(grpc::StatusCode::UNKNOWN);
  auto* counter = m.calls[index].load(std::memory_order_acquire);
  if (counter == nullptr) {
    // Family::Add returns the existing counter for the same labels, so a race adds nothing.
    auto labels = m.labels;
    labels.emplace("code", StatusCodeName(static_cast<grpc::StatusCode>(index)));
    counter = &calls_.Add(labels);
    m.calls[index].store(counter, std::memory_order_release);
  }
  counter->Increment();
  m.duration->Observe(std::chrono::duration<double>(elapsed).count());
}

}  // namespace dxshim
