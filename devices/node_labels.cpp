#include "devices/node_labels.h"

#include <algorithm>
#include <cctype>

#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"
#include "shim/base/comma_list.h"
#include "shim/base/dxshim_keys.h"

namespace dxshim::devices {
namespace {

bool Alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A vendor name as a label-name part: lower case, anything outside [a-z0-9] becomes '-'.
std::string NamePart(const std::string& text) {
  std::string out;
  for (const char c : ToLowerAscii(text)) out += Alnum(c) ? c : '-';
  while (!out.empty() && out.back() == '-') out.pop_back();
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  if (out.size() > 40) out.resize(40);
  return out.empty() ? "unknown" : out;
}

bool Brings(const Device& d, const std::string& file) {
  return std::any_of(d.system32.begin(), d.system32.end(),
                     [&](const RuntimeFile& f) { return EqualsIgnoreCase(f.destination, file); });
}

bool DnsSubdomain(std::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto dot = text.find('.', start);
    if (dot == std::string_view::npos) dot = text.size();
    const auto label = text.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || !Alnum(label.front()) || !Alnum(label.back())) {
      return false;
    }
    for (const char c : label) {
      const bool lower_alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      if (!lower_alnum && c != '-') return false;
    }
    start = dot + 1;
  }
  return true;
}

}  // namespace

std::map<std::string, std::string> NodeLabels(const std::vector<Device>& devices) {
  std::map<std::string, std::string> labels;
  const std::string prefix(keys::kNodeLabelPrefix);
  unsigned count = 0;
  std::uint64_t largest = 0;
  for (const auto& d : devices) {
    if (!d.present) continue;
    ++count;
    largest = std::max(largest, d.dedicated_memory);
    labels[prefix + "vendor." + NamePart(d.vendor.empty() ? VendorName(d.vendor_id) : d.vendor)] =
        "true";
    labels[prefix + "class." + ToString(d.device_class)] = "true";
    for (const auto& [api, file] : RequirableApis()) {
      if (Brings(d, file)) labels[std::string(prefix).append("api.").append(api)] = "true";
    }
  }
  labels[prefix + "present"] = count ? "true" : "false";
  if (count) {
    labels[prefix + "count"] = std::to_string(count);
    labels[prefix + "memory-mib"] = std::to_string(largest >> 20);
  }
  return labels;
}

std::string FormatLabelLines(const std::map<std::string, std::string>& labels) {
  std::string out;
  for (const auto& [key, value] : labels) out.append(key).append("=").append(value).append("\n");
  return out;
}

std::string FormatLabelList(const std::map<std::string, std::string>& labels) {
  return JoinCommaList(labels, [](const auto& label) { return label.first + "=" + label.second; });
}

bool IsLabelValue(std::string_view value) {
  if (value.empty()) return true;
  if (value.size() > 63 || !Alnum(value.front()) || !Alnum(value.back())) return false;
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return Alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsLabelKey(std::string_view key) {
  const auto slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (!DnsSubdomain(key.substr(0, slash))) return false;
    key.remove_prefix(slash + 1);
  }
  return !key.empty() && IsLabelValue(key);
}

}  // namespace dxshim::devices
