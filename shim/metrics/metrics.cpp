#include "shim/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include <iterator>
#include <sstream>
#include <utility>

namespace dxshim::metrics {

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {}

void Metrics::AddCollector(std::function<std::vector<prometheus::MetricFamily>()> collect) {
  collectors_.push_back(std::move(collect));
}

std::string Metrics::Render() const {
  auto families = registry_->Collect();
  for (const auto& collect : collectors_) {
    auto more = collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace dxshim::metrics
