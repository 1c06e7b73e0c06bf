#include "config/extra_runtime_files_config.h"

#include <charconv>

#include "config/serve_config.h"
#include "devices/runtime_files.h"
#include "shim/base/utf8_text.h"

namespace dxshim::config {
namespace {

[[noreturn]] void Fail(const std::string& file, const YAML::Node& node, const std::string& field,
                       const std::string& problem) {
  throw ConfigError(file + " line " + std::to_string(node.Mark().line + 1) + ": " + field + ": " +
                    problem);
}

std::string Scalar(const std::string& file, const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar()) Fail(file, node, field, "must be a string");
  return node.as<std::string>();
}

// A mapping's key: a YAML key may be a list or a mapping, which names nothing here.
std::string Key(const std::string& file, const YAML::Node& key, const std::string& field) {
  if (!key.IsScalar()) Fail(file, key, field, "a key must be a plain string");
  return key.as<std::string>();
}

std::vector<devices::RuntimeFile> Files(const std::string& file, const YAML::Node& node,
                                        const std::string& field) {
  std::vector<devices::RuntimeFile> out;
  if (!node.IsDefined() || node.IsNull()) return out;
  if (!node.IsSequence()) Fail(file, node, field, "must be a list of {source, destination}");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const auto item = node[i];
    const auto f = field + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) Fail(file, item, f, "must be a mapping with source and destination");
    for (const auto& kv : item) {
      const auto key = Key(file, kv.first, f);
      if (key != "source" && key != "destination") Fail(file, kv.first, f, "unknown key " + key);
    }
    // A missing key has no line of its own: the item's is given.
    if (!item["source"].IsDefined()) Fail(file, item, f + ".source", "missing");
    devices::RuntimeFile rf;
    rf.source = Scalar(file, item["source"], f + ".source");
    rf.destination = item["destination"].IsDefined()
                         ? Scalar(file, item["destination"], f + ".destination")
                         : rf.source.substr(rf.source.find_last_of('\\') + 1);
    // Each becomes a mount's path in a CRI request, which must be UTF-8 (shim/base/utf8_text.h).
    if (auto why = Utf8Problem(rf.source)) Fail(file, item, f + ".source", *why);
    if (auto why = Utf8Problem(rf.destination)) Fail(file, item, f + ".destination", *why);
    if (auto why = devices::UnsafeSourceReason(rf.source)) Fail(file, item, f + ".source", *why);
    if (auto why = devices::UnsafeDestinationReason(rf.destination)) {
      Fail(file, item, f + ".destination", *why);
    }
    out.push_back(std::move(rf));
  }
  return out;
}

}  // namespace

std::vector<devices::VendorRuntimeFiles> ParseExtraRuntimeFiles(const YAML::Node& node,
                                                                const std::string& file) {
  std::vector<devices::VendorRuntimeFiles> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) Fail(file, node, "extra-runtime-files", "must be a list");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const auto item = node[i];
    const auto field = "extra-runtime-files[" + std::to_string(i) + "]";
    if (!item.IsMap()) Fail(file, item, field, "must be a mapping");
    for (const auto& kv : item) {
      const auto key = Key(file, kv.first, field);
      if (key != "vendor" && key != "vendor-id" && key != "system32" && key != "syswow64") {
        Fail(file, kv.first, field,
             "unknown key " + key + " (known: vendor, vendor-id, system32, syswow64)");
      }
    }
    devices::VendorRuntimeFiles extra;
    if (item["vendor"].IsDefined()) extra.vendor = Scalar(file, item["vendor"], field + ".vendor");
    if (item["vendor-id"].IsDefined()) {
      auto text = Scalar(file, item["vendor-id"], field + ".vendor-id");
      std::string_view digits = text;
      if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
      unsigned value = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() ||
          value == 0 || value > 0xffff) {
        Fail(file, item["vendor-id"], field + ".vendor-id",
             "'" + text + "' is not a PCI vendor id");
      }
      extra.vendor_id = static_cast<std::uint16_t>(value);
    }
    if (extra.vendor.empty() == (extra.vendor_id == 0)) {
      Fail(file, item, field, "needs exactly one of vendor or vendor-id");
    }
    extra.system32 = Files(file, item["system32"], field + ".system32");
    extra.syswow64 = Files(file, item["syswow64"], field + ".syswow64");
    out.push_back(std::move(extra));
  }
  return out;
}

}  // namespace dxshim::config
