// libFuzzer target: serve's configuration file (dxshim.yaml) through its loader
// (config/serve_config_keys.h ApplyServeConfigFile, the option table serve_option_table.h, the
// extra-runtime-files section extra_runtime_files_config.h, then CheckServeConfig and the device
// snapshot's settings device_snapshot_config.h). The input is the file's text. Properties:
// - never crashes, and nothing escapes but ConfigError, the loader's documented error (a
//   yaml-cpp exception, a std::invalid_argument that escapes, is a finding);
// - an error names the file and what it is about: a key of the document, or the YAML itself;
// - a configuration it accepts has every value within the option table's bounds;
// - the device plugin child's command line (PluginArgs) reads back, key by key, to the same
//   values: what serve accepted, the child accepts.
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "config/device_snapshot_config.h"
#include "config/serve_config.h"
#include "config/serve_config_keys.h"
#include "config/serve_option_table.h"
#include "devices/runtime_files.h"

namespace {

using dxshim::config::ConfigError;
using dxshim::config::ServeConfig;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "property failed: %s\n", what.c_str());
  std::abort();
}

// The document's scalar top-level keys (an error must name one of them, or be about the YAML).
std::vector<std::string> TopKeys(const std::string& text) {
  std::vector<std::string> keys;
  try {
    const auto root = YAML::Load(text);
    if (!root.IsMap()) return keys;
    for (const auto& entry : root) {
      if (entry.first.IsScalar()) keys.push_back(entry.first.Scalar());
    }
  } catch (const YAML::Exception&) {
  }
  return keys;
}

bool DnsLabels(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (n.empty() || n.size() > 63) return false;
    for (const char c : n) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
  }
  return true;
}

void CheckBounds(const ServeConfig& c) {
  using std::chrono::milliseconds;
  constexpr std::uint64_t kMi = std::uint64_t{1} << 20;
  if (c.socket_mode > 0777) Fail("socket-mode");
  if (c.log_file_max_size < (64u << 10)) Fail("log-file-max-size");
  if (c.log_file_count < 1 || c.log_file_count > 1024) Fail("log-file-count");
  for (const auto d :
       {c.shutdown_grace, c.reconnect_backoff_max, c.device_refresh, c.resync_interval}) {
    if (d < milliseconds(0) || d > std::chrono::hours(24)) Fail("a duration");
  }
  const auto& p = c.policy;
  if (p.max_containers_per_device < 1 || p.max_containers_per_device > 1024) {
    Fail("max-containers-per-device");
  }
  if (p.default_gpu_memory != 0 && p.default_gpu_memory < kMi) Fail("default-gpu-memory");
  if (p.gpu_memory_reserved != 0 && p.gpu_memory_reserved < kMi) Fail("gpu-memory-reserved");
  if (p.gpu_memory_unit < kMi || p.gpu_memory_unit > (std::uint64_t{1} << 40)) {
    Fail("gpu-memory-unit");
  }
  if (!DnsLabels(p.allow_namespaces) || !DnsLabels(p.deny_namespaces)) Fail("namespaces");
  if (!DnsLabels(c.vm_runtime_handlers)) Fail("vm-runtime-handlers");
  if (c.device_plugin_resource.find('/') == std::string::npos) Fail("device-plugin-resource");
  if (c.device_plugin_memory_resource == c.device_plugin_resource) Fail("the two resources");
  if (!c.pipe_sddl.starts_with("D:") && !c.pipe_sddl.starts_with("O:") &&
      !c.pipe_sddl.starts_with("G:")) {
    Fail("pipe-sddl");
  }
  for (const auto* path : {&c.linux_system32_path, &c.linux_syswow64_path}) {
    if (!path->starts_with('/') || path->find("..") != std::string::npos) Fail("a linux path");
  }
  if (c.metrics_listen != dxshim::config::ParseMetricsListen(c.metrics_listen)) {
    Fail("metrics-listen");
  }
  for (const auto& extra : c.extra_runtime_files) {
    if (extra.vendor.empty() == (extra.vendor_id == 0)) Fail("extra-runtime-files vendor");
    for (const auto* files : {&extra.system32, &extra.syswow64}) {
      for (const auto& f : *files) {
        if (dxshim::devices::UnsafeSourceReason(f.source) ||
            dxshim::devices::UnsafeDestinationReason(f.destination)) {
          Fail("extra-runtime-files file");
        }
      }
    }
  }
  const auto snapshot = dxshim::config::SnapshotOptionsOf(c);
  if (snapshot.refresh_interval != c.device_refresh) Fail("device snapshot refresh");
}

// What serve hands the device plugin child reads back to the same values.
void CheckPluginArgs(const ServeConfig& c) {
  const auto args = dxshim::config::PluginArgs(c);
  ServeConfig child;
  for (std::size_t i = 1; i + 1 < args.size(); i += 2) {
    const auto key = args[i].substr(2);
    try {
      dxshim::config::ApplyServeKey(child, key, args[i + 1], args[i]);
    } catch (const ConfigError& e) {
      Fail("the child refuses " + args[i] + " " + args[i + 1] + ": " + e.what());
    }
  }
  if (dxshim::config::PluginArgs(child) != args) Fail("the child's values differ");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The loader reads a path: one file per fuzzing process, removed when it exits.
  static const std::string path =
      "/tmp/dxshim-serve-config-fuzz-" + std::to_string(getpid()) + ".yaml";
  // Registered once `path` exists, so that it runs before `path` is destroyed.
  [[maybe_unused]] static const int removed = std::atexit([] { std::remove(path.c_str()); });
  const std::string text(reinterpret_cast<const char*>(data), size);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  ServeConfig config;
  try {
    dxshim::config::ApplyServeConfigFile(config, path);
    dxshim::config::CheckServeConfig(config);
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    if (!message.starts_with("config " + path) && !message.starts_with("keys '")) {
      Fail("an error without the file: " + message);
    }
    bool named = message.find("invalid YAML") != std::string::npos ||
                 message.find("the top level must be") != std::string::npos ||
                 message.find("a key must be a plain string") != std::string::npos;
    for (const auto& key : TopKeys(text)) {
      // A key with a byte that is not printable ASCII may be named escaped (a control byte or
      // one that is not UTF-8: a NUL would end the message): what precedes it is named as is.
      const auto plain = key.substr(
          0, static_cast<std::size_t>(std::find_if(key.begin(), key.end(),
                                                   [](char c) {
                                                     const auto b = static_cast<unsigned char>(c);
                                                     return b < 0x20 || b >= 0x7F;
                                                   }) -
                                      key.begin()));
      if (plain.size() < key.size()) {
        named = named || message.find("'" + plain) != std::string::npos;
        continue;
      }
      named = named || message.find("'" + key + "'") != std::string::npos ||
              (key == "extra-runtime-files" && message.find(key) != std::string::npos);
    }
    if (!named) Fail("an error that names no key: " + message);
    return 0;
  } catch (const std::exception& e) {
    Fail(std::string("an exception other than ConfigError: ") + e.what());
  }
  CheckBounds(config);
  CheckPluginArgs(config);
  return 0;
}
