// The option table (config/serve_option_table.h) is the one description of serve's keys:
// docs/configuration.md's option table is exactly the table's rows, every default (Windows' too)
// is a value its key accepts, the device plugin child's command line carries its keys in their own
// syntax and reads back to the same values, and --help shows each help without markdown and with
// its default.
#include "config/serve_option_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/serve_config_keys.h"

namespace dxshim::config {
namespace {

// The rows of docs/configuration.md's table under its "| key | default | meaning |" header.
std::string ReferenceTable() {
  std::ifstream in(DXSHIM_SOURCE_DIR "/docs/configuration.md");
  std::string line;
  while (std::getline(in, line) && line != "| key | default | meaning |") {
  }
  std::getline(in, line);  // | --- | --- | --- |
  std::string rows;
  while (std::getline(in, line) && line.starts_with("|")) rows += line + "\n";
  return rows;
}

TEST(ServeOptionTable, TheReferenceTableIsTheOptionTable) {
  std::string rows;
  for (const auto& option : ServeOptions()) rows += ReferenceRow(option) + "\n";
  EXPECT_EQ(ReferenceTable(), rows) << "docs/configuration.md's option table must be these rows";
}

TEST(ServeOptionTable, KeysAreUniqueAndEveryDefaultIsAValueItsKeyTakes) {
  std::set<std::string> seen;
  for (const auto& option : ServeOptions()) {
    EXPECT_TRUE(seen.insert(option.key).second) << option.key;
    EXPECT_NE(*option.type, '\0') << option.key;
    EXPECT_NE(*option.help, '\0') << option.key;
    EXPECT_EQ(option.to_plugin, option.get != nullptr) << option.key;
    if (!option.set) continue;  // file only
    for (const char* value : {option.linux_default, option.windows_default}) {
      if (!value) continue;
      ServeConfig c;
      EXPECT_NO_THROW(ApplyServeKey(c, option.key, value, "default")) << option.key << value;
    }
  }
  EXPECT_EQ(seen.size(), ServeKeys().size() + 1);  // + extra-runtime-files, file only
}

TEST(ServeOptionTable, ThePluginChildReadsBackWhatServeHas) {
  ServeConfig serve;
  ApplyServeKey(serve, "device-refresh", "1500ms", "test");
  ApplyServeKey(serve, "resync-interval", "2m", "test");
  ApplyServeKey(serve, "include-detachable", "true", "test");
  ApplyServeKey(serve, "max-containers-per-device", "3", "test");
  ApplyServeKey(serve, "device-plugin-resource", "example.com/gpu", "test");
  ApplyServeKey(serve, "device-source", "inventory:/etc/dxshim/node.yaml", "test");
  ApplyServeKey(serve, "default-gpu-memory", "3Gi", "test");
  ApplyServeKey(serve, "gpu-memory-reserved", "512Mi", "test");
  ApplyServeKey(serve, "gpu-memory-unit", "2Gi", "test");
  const auto args = PluginArgs(serve);
  ASSERT_EQ(args.size() % 2, 1u);
  EXPECT_EQ(args[0], "device-plugin");
  ServeConfig child;
  std::vector<std::string> keys;
  for (std::size_t i = 1; i < args.size(); i += 2) {
    ASSERT_TRUE(args[i].starts_with("--")) << args[i];
    keys.push_back(args[i].substr(2));
    ApplyServeKey(child, keys.back(), args[i + 1], args[i]);
  }
  EXPECT_EQ(keys, PluginKeys());
  EXPECT_EQ(keys,
            (std::vector<std::string>{
                "runtime", "log-level", "device-source", "sysfs-root", "device-refresh",
                "include-integrated", "include-detachable", "max-containers-per-device",
                "default-gpu-memory", "gpu-memory-reserved", "gpu-memory-unit", "resync-interval",
                "device-plugin-dir", "device-plugin-resource", "device-plugin-memory-resource"}));
  EXPECT_EQ(child.device_refresh, serve.device_refresh);
  EXPECT_EQ(child.resync_interval, serve.resync_interval);
  EXPECT_EQ(child.include_detachable, true);
  EXPECT_EQ(child.policy.max_containers_per_device, 3u);
  EXPECT_EQ(child.policy.default_gpu_memory, serve.policy.default_gpu_memory);
  EXPECT_EQ(child.policy.gpu_memory_reserved, 512ull << 20);
  EXPECT_EQ(child.policy.gpu_memory_unit, 2ull << 30);
  EXPECT_EQ(child.device_plugin_memory_resource, "dxshim.io/gpu-memory");
  EXPECT_EQ(child.device_plugin_resource, "example.com/gpu");
  EXPECT_EQ(child.device_source, serve.device_source);
  EXPECT_EQ(child.runtime, serve.runtime);
}

TEST(ServeOptionTable, HelpIsPlainTextWithTheDefault) {
  const auto* option = FindServeOption("max-containers-per-device");
  ASSERT_NE(option, nullptr);
  EXPECT_EQ(HelpText(*option),
            "pods one GPU may serve at once (1: every pod gets its GPUs alone) (default: 1)");
  const auto* metrics = FindServeOption("metrics-listen");
  ASSERT_NE(metrics, nullptr);
  EXPECT_EQ(HelpText(*metrics).find('`'), std::string::npos);
  EXPECT_NE(HelpText(*metrics).find("(default: -, none)"), std::string::npos) << HelpText(*metrics);
  EXPECT_EQ(FindServeOption("no-such-key"), nullptr);
}

}  // namespace
}  // namespace dxshim::config
