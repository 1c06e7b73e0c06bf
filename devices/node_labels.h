// The node labels that let the scheduler pick a node by its GPUs, derived from the devices dxshim
// hands out (after the include-* filters; absent devices do not count). Every key is under the
// dxshim.io/ prefix; values are valid Kubernetes label values, and the memory is an integer so
// that node affinity can compare it (Gt, Lt):
//
//   dxshim.io/gpu.present=true          at least one GPU (false, the only label, when none)
//   dxshim.io/gpu.count=2
//   dxshim.io/gpu.memory-mib=16384      the largest dedicated memory of one GPU
//   dxshim.io/gpu.vendor.nvidia=true    one per vendor
//   dxshim.io/gpu.class.display=true    one per class (display, compute)
//   dxshim.io/gpu.api.cuda=true         one per API of dxshim.io/requires some GPU brings
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices {

std::map<std::string, std::string> NodeLabels(const std::vector<Device>& devices);

// "key=value" lines, sorted: the format of `dxshim devices --output labels` and of Node Feature
// Discovery's local feature files.
std::string FormatLabelLines(const std::map<std::string, std::string>& labels);

// "key=value,key=value": kubelet's --node-labels.
std::string FormatLabelList(const std::map<std::string, std::string>& labels);

// Kubernetes' syntax rules: a value is empty or at most 63 characters of [A-Za-z0-9-_.] that
// begin and end with an alphanumeric; a key is an optional DNS subdomain prefix (at most 253
// characters) and '/', then a name with the value's rules that is not empty.
bool IsLabelValue(std::string_view value);
bool IsLabelKey(std::string_view key);

}  // namespace dxshim::devices
