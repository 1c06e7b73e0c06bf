// Building the families a collector returns at scrape time (prometheus-cpp's plain structs).
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <vector>

namespace dxshim::metrics {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type);

// Appends one sample: a counter's or a gauge's value, as the family's type says.
void AddSample(prometheus::MetricFamily& family,
               std::vector<prometheus::ClientMetric::Label> labels, double value);

}  // namespace dxshim::metrics
