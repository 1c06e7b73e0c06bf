// serve's configuration (config/serve_config.h): the defaults, every key from a file and from a
// flag, the shipped examples, and errors that name the file, line, key or flag and what was wrong.
#include "config/serve_config.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "config/serve_config_keys.h"
#include "config/serve_option_table.h"
#include "devices/allocation/gpu_memory.h"
#include "tests/support/temp_dir.h"

namespace dxshim::config {
namespace {

std::string WriteFile(const test::TempDir& dir, const std::string& text) {
  const auto path = dir / "dxshim.yaml";
  std::ofstream(path) << text;
  return path;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ServeConfig, DefaultsAreTheUsualSockets) {
  ServeConfig c;
  EXPECT_EQ(c.listen, "unix:///run/dxshim/dxshim.sock");
  EXPECT_EQ(c.runtime, "unix:///run/containerd/containerd.sock");
  EXPECT_EQ(c.socket_mode, 0660u);
}

TEST(ServeConfig, TheMemoryResourceMayNotBeNamedAsTheSlots) {
  ServeConfig cfg;
  EXPECT_NO_THROW(CheckServeConfig(cfg));
  ApplyServeKey(cfg, "device-plugin-memory-resource", "dxshim.io/gpu",
                "--device-plugin-memory-resource");
  try {
    CheckServeConfig(cfg);
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'device-plugin-resource' and 'device-plugin-memory-resource' "
                                   "both name 'dxshim.io/gpu'"),
        std::string::npos)
        << e.what();
  }
  ApplyServeKey(cfg, "device-plugin-memory-resource", "-", "--device-plugin-memory-resource");
  EXPECT_NO_THROW(CheckServeConfig(cfg));
}

TEST(ServeConfig, FileSetsEveryKey) {
  test::TempDir dir;
  ServeConfig c;
  ApplyServeConfigFile(c, WriteFile(dir, R"(listen: unix:///tmp/x.sock
runtime: tcp://127.0.0.1:5000
socket-mode: "0600"
log-level: debug
shutdown-grace: 250ms
reconnect-backoff-max: 1m
)"));
  EXPECT_EQ(c.listen, "unix:///tmp/x.sock");
  EXPECT_EQ(c.runtime, "tcp://127.0.0.1:5000");
  EXPECT_EQ(c.socket_mode, 0600u);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.shutdown_grace, std::chrono::milliseconds(250));
  EXPECT_EQ(c.reconnect_backoff_max, std::chrono::minutes(1));
}

// Every key of the option table is in the shipped example, which says it states every default.
TEST(ServeConfig, TheShippedExampleNamesEveryKey) {
  std::ifstream in(DXSHIM_SOURCE_DIR "/deploy/examples/dxshim.yaml");
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& option : ServeOptions()) {
    const std::string key = option.key;
    const bool named = text.str().find("\n" + key + ":") != std::string::npos ||
                       text.str().find("\n# " + key + ":") != std::string::npos;
    EXPECT_TRUE(named) << key << " is missing from deploy/examples/dxshim.yaml";
  }
}

TEST(ServeConfig, TheShippedExampleIsValidAndStatesTheDefaults) {
  ServeConfig c;
  ApplyServeConfigFile(c, DXSHIM_SOURCE_DIR "/deploy/examples/dxshim.yaml");
  const ServeConfig defaults;
  EXPECT_EQ(c.listen, defaults.listen);
  EXPECT_EQ(c.runtime, defaults.runtime);
  EXPECT_EQ(c.socket_mode, defaults.socket_mode);
  EXPECT_EQ(c.log_level, defaults.log_level);
  EXPECT_EQ(c.pipe_sddl, defaults.pipe_sddl);
  EXPECT_EQ(c.log_file, defaults.log_file);
  EXPECT_EQ(c.log_file_max_size, defaults.log_file_max_size);
  EXPECT_EQ(c.log_file_count, defaults.log_file_count);
  EXPECT_EQ(c.shutdown_grace, defaults.shutdown_grace);
  EXPECT_EQ(c.reconnect_backoff_max, defaults.reconnect_backoff_max);
  EXPECT_EQ(c.device_source, defaults.device_source);
  EXPECT_EQ(c.device_refresh, defaults.device_refresh);
  EXPECT_EQ(c.include_integrated, defaults.include_integrated);
  EXPECT_EQ(c.include_detachable, defaults.include_detachable);
  EXPECT_EQ(c.policy.max_containers_per_device, defaults.policy.max_containers_per_device);
  EXPECT_EQ(c.policy.default_gpu_memory, defaults.policy.default_gpu_memory);
  EXPECT_EQ(c.policy.gpu_memory_reserved, defaults.policy.gpu_memory_reserved);
  EXPECT_EQ(c.policy.spread_or_pack, defaults.policy.spread_or_pack);
  EXPECT_EQ(c.policy.allow_namespaces, defaults.policy.allow_namespaces);
  EXPECT_EQ(c.policy.deny_namespaces, defaults.policy.deny_namespaces);
  EXPECT_EQ(c.policy.narrow_class_devices, defaults.policy.narrow_class_devices);
  EXPECT_EQ(c.resync_interval, defaults.resync_interval);
  EXPECT_EQ(c.linux_system32_path, defaults.linux_system32_path);
  EXPECT_EQ(c.linux_syswow64_path, defaults.linux_syswow64_path);
  EXPECT_EQ(c.extra_runtime_files, defaults.extra_runtime_files);
  EXPECT_EQ(c.device_plugin, defaults.device_plugin);
  EXPECT_EQ(c.device_plugin_dir, defaults.device_plugin_dir);
  EXPECT_EQ(c.device_plugin_resource, defaults.device_plugin_resource);
  EXPECT_EQ(c.node_feature_file, defaults.node_feature_file);
  EXPECT_EQ(c.node_feature_file_remove, defaults.node_feature_file_remove);
  EXPECT_EQ(c.metrics_listen, defaults.metrics_listen);
}

TEST(ServeConfig, MetricsListen) {
  ServeConfig c;
  EXPECT_EQ(c.metrics_listen, "") << "off unless asked for";
  for (const char* good :
       {"127.0.0.1:9464", "0.0.0.0:9464", "10.1.2.3:0", "[::1]:9464", "[::]:65535"}) {
    ApplyServeKey(c, "metrics-listen", good, "--metrics-listen");
    EXPECT_EQ(c.metrics_listen, good);
  }
  ApplyServeKey(c, "metrics-listen", "-", "--metrics-listen");
  EXPECT_EQ(c.metrics_listen, "");
  const std::pair<const char*, const char*> bad[] = {
      {"9464", "no port"},
      {"localhost:9464", "an IP address, not a name"},
      {"127.0.0.1:", "0 to 65535"},
      {"127.0.0.1:65536", "0 to 65535"},
      {"127.0.0.1:94x", "0 to 65535"},
      {"1.2.3.4.5:80", "an IP address"},
      {"1.2.3:80", "an IP address"},
      {"256.1.1.1:80", "an IP address"},
      {"[::1:80", "unterminated IPv6 address"},
      {"unix:///run/dxshim/metrics.sock", "unix sockets are not served"},
  };
  for (const auto& [text, why] : bad) {
    try {
      ApplyServeKey(c, "metrics-listen", text, "--metrics-listen");
      ADD_FAILURE() << text << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--metrics-listen"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(ServeConfig, DevicePluginAndNodeLabelKeys) {
  ServeConfig c;
  EXPECT_TRUE(c.device_plugin);
  EXPECT_EQ(c.device_plugin_resource, "dxshim.io/gpu");
  ApplyServeKey(c, "device-plugin", "false", "--device-plugin");
  ApplyServeKey(c, "device-plugin-dir", "/var/lib/k/dp", "--device-plugin-dir");
  ApplyServeKey(c, "device-plugin-resource", "example.com/render-gpu", "--device-plugin-resource");
  ApplyServeKey(c, "node-feature-file", "/etc/nfd/features.d/dxshim", "--node-feature-file");
  ApplyServeKey(c, "node-feature-file-remove", "true", "--node-feature-file-remove");
  EXPECT_FALSE(c.device_plugin);
  EXPECT_EQ(c.device_plugin_dir, "/var/lib/k/dp");
  EXPECT_EQ(c.device_plugin_resource, "example.com/render-gpu");
  EXPECT_EQ(c.node_feature_file, "/etc/nfd/features.d/dxshim");
  EXPECT_TRUE(c.node_feature_file_remove);
  ApplyServeKey(c, "node-feature-file", "-", "--node-feature-file");
  EXPECT_EQ(c.node_feature_file, "");
  for (const char* bad : {"gpu", "kubernetes.io/gpu", "nvidia.kubernetes.io/gpu", "dxshim.io/",
                          "Dxshim.io/gpu", "dxshim.io/gpu/x", "dxshim.io/-gpu"}) {
    try {
      ApplyServeKey(c, "device-plugin-resource", bad, "--device-plugin-resource");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("--device-plugin-resource"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(ServeConfig, EmptyFileKeepsDefaults) {
  test::TempDir dir;
  ServeConfig c;
  ApplyServeConfigFile(c, WriteFile(dir, ""));
  EXPECT_EQ(c.listen, ServeConfig{}.listen);
}

TEST(ServeConfig, ErrorsNameFileLineAndKey) {
  test::TempDir dir;
  ServeConfig c;
  auto msg =
      ErrorOf([&] { ApplyServeConfigFile(c, WriteFile(dir, "listen: /a\nlisten-on: /b\n")); });
  EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key 'listen-on'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("known keys: listen, runtime"), std::string::npos) << msg;

  msg = ErrorOf([&] { ApplyServeConfigFile(c, WriteFile(dir, "runtime:\n  - a\n  - b\n")); });
  EXPECT_NE(msg.find("'runtime' must have a single value"), std::string::npos) << msg;

  msg = ErrorOf([&] { ApplyServeConfigFile(c, WriteFile(dir, "socket-mode: 999\n")); });
  EXPECT_NE(msg.find("socket-mode"), std::string::npos) << msg;
  EXPECT_NE(msg.find("octal"), std::string::npos) << msg;

  msg = ErrorOf([&] { ApplyServeConfigFile(c, WriteFile(dir, "- just\n- a list\n")); });
  EXPECT_NE(msg.find("mapping"), std::string::npos) << msg;

  msg = ErrorOf([&] { ApplyServeConfigFile(c, WriteFile(dir, "listen: [unclosed\n")); });
  EXPECT_NE(msg.find("invalid YAML"), std::string::npos) << msg;

  msg = ErrorOf([&] { ApplyServeConfigFile(c, dir / "missing.yaml"); });
  EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;

  // An empty name in a YAML list is refused, not read as "every namespace" (a list of one empty
  // name would join into "", the empty list).
  for (const char* list : {"[\"\"]", "[\"\", team-a]", "[\" \"]"}) {
    msg = ErrorOf([&] {
      ApplyServeConfigFile(c, WriteFile(dir, std::string("allow-namespaces: ") + list + "\n"));
    });
    EXPECT_NE(msg.find("'allow-namespaces': an empty name in the list"), std::string::npos)
        << list << ": " << msg;
  }
}

TEST(ServeConfig, FlagErrorsNameTheFlag) {
  ServeConfig c;
  auto msg = ErrorOf([&] { ApplyServeKey(c, "shutdown-grace", "soon", "--shutdown-grace"); });
  EXPECT_NE(msg.find("--shutdown-grace"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'soon'"), std::string::npos) << msg;
}

TEST(ServeConfig, DeviceAndPolicyKeys) {
  test::TempDir dir;
  ServeConfig c;
  ApplyServeConfigFile(c, WriteFile(dir, R"(device-source: inventory:/etc/dxshim/inventory.yaml
device-refresh: 30s
include-integrated: true
target: windows
max-containers-per-device: 4
placement: pack
allow-namespaces: [gpu-team, render]
deny-namespaces: kube-system, default
narrow-class-devices: true
linux-system32-path: /opt/gpu/lib
extra-runtime-files:
  - vendor: NVIDIA
    system32:
      - {source: nvidia-smi.exe, destination: nvidia-smi.exe}
      - {source: tools\nvtop.exe}
  - vendor-id: "0x1002"
    syswow64:
      - {source: amdx32.dll, destination: amdx32.dll}
)"));
  EXPECT_EQ(c.device_source, "inventory:/etc/dxshim/inventory.yaml");
  EXPECT_EQ(c.device_refresh, std::chrono::seconds(30));
  EXPECT_TRUE(c.include_integrated);
  EXPECT_FALSE(c.include_detachable);
  EXPECT_EQ(c.target, Target::kWindows);
  EXPECT_EQ(c.policy.max_containers_per_device, 4u);
  EXPECT_EQ(c.policy.spread_or_pack, devices::SpreadOrPack::kPack);
  EXPECT_EQ(c.policy.allow_namespaces, (std::vector<std::string>{"gpu-team", "render"}));
  EXPECT_EQ(c.policy.deny_namespaces, (std::vector<std::string>{"kube-system", "default"}));
  EXPECT_TRUE(c.policy.narrow_class_devices);
  EXPECT_EQ(c.linux_system32_path, "/opt/gpu/lib");
  ASSERT_EQ(c.extra_runtime_files.size(), 2u);
  EXPECT_EQ(c.extra_runtime_files[0].vendor, "NVIDIA");
  EXPECT_EQ(c.extra_runtime_files[0].system32,
            (std::vector<devices::RuntimeFile>{{"nvidia-smi.exe", "nvidia-smi.exe"},
                                               {"tools\\nvtop.exe", "nvtop.exe"}}));
  EXPECT_EQ(c.extra_runtime_files[1].vendor_id, 0x1002);
  EXPECT_EQ(c.extra_runtime_files[1].syswow64.size(), 1u);
}

TEST(ServeConfig, ExtraRuntimeFilesAreCheckedLikeRegistryData) {
  test::TempDir dir;
  ServeConfig c;
  const auto error = [&](const std::string& body) {
    return ErrorOf(
        [&] { ApplyServeConfigFile(c, WriteFile(dir, "extra-runtime-files:\n" + body)); });
  };
  auto msg = error("  - vendor: NVIDIA\n    system32:\n      - {source: ..\\..\\SAM}\n");
  EXPECT_NE(msg.find("line 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("extra-runtime-files[0].system32[0].source"), std::string::npos) << msg;
  EXPECT_NE(msg.find(".."), std::string::npos) << msg;
  msg = error("  - vendor: NVIDIA\n    system32:\n      - {source: 'C:\\x.dll'}\n");
  EXPECT_NE(msg.find("drive letter"), std::string::npos) << msg;
  msg = error(
      "  - vendor: NVIDIA\n    system32:\n      - {source: a.dll, destination: 'x\\y.dll'}\n");
  EXPECT_NE(msg.find("system32[0].destination"), std::string::npos) << msg;
  // A file name that is not UTF-8 could never be mounted (a CRI string must be UTF-8).
  msg = error("  - vendor: NVIDIA\n    system32:\n      - {source: 'nvidia-smi\xff.exe'}\n");
  EXPECT_NE(msg.find("line 4: extra-runtime-files[0].system32[0].source: is not valid UTF-8 (byte "
                     "0xFF at offset 10 of 'nvidia-smi\\xFF.exe')"),
            std::string::npos)
      << msg;
  msg = error("  - vendor: NVIDIA\n    vendor-id: '0x10de'\n");
  EXPECT_NE(msg.find("exactly one of vendor or vendor-id"), std::string::npos) << msg;
  msg = error("  - vendor-id: nvidia\n");
  EXPECT_NE(msg.find("not a PCI vendor id"), std::string::npos) << msg;
  // Found by tests/fuzz/serve_config_fuzz.cpp: a file without its source, and a key that is a
  // list, escaped as yaml-cpp's exceptions instead of an error that names the field.
  msg = error("  - vendor: NVIDIA\n    system32:\n      - {destination: x.dll}\n");
  EXPECT_NE(msg.find("line 4: extra-runtime-files[0].system32[0].source: missing"),
            std::string::npos)
      << msg;
  msg = error("  - vendor: NVIDIA\n    system32:\n      - {? [a] : b}\n");
  EXPECT_NE(msg.find("extra-runtime-files[0].system32[0]: a key must be a plain string"),
            std::string::npos)
      << msg;
  msg = error("  - vendor: NVIDIA\n    ? [a]\n    : b\n");
  EXPECT_NE(msg.find("line 3: extra-runtime-files[0]: a key must be a plain string"),
            std::string::npos)
      << msg;
  msg = error("  - vendor: NVIDIA\n    system64: []\n");
  EXPECT_NE(msg.find("unknown key system64"), std::string::npos) << msg;
  msg = error("  vendor: NVIDIA\n");
  EXPECT_NE(msg.find("must be a list"), std::string::npos) << msg;
}

TEST(ServeConfig, PolicyValueErrors) {
  ServeConfig c;
  auto msg = ErrorOf([&] { ApplyServeKey(c, "max-containers-per-device", "0", "--x"); });
  EXPECT_NE(msg.find("from 1 to 1024"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "placement", "random", "--placement"); });
  EXPECT_NE(msg.find("spread or pack"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "allow-namespaces", "Team_A", "--allow-namespaces"); });
  EXPECT_NE(msg.find("'Team_A' is not a namespace name"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "target", "macos", "--target"); });
  EXPECT_NE(msg.find("windows or linux"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "include-integrated", "yes", "--include-integrated"); });
  EXPECT_NE(msg.find("true or false"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "linux-system32-path", "lib/../x", "--l"); });
  EXPECT_NE(msg.find("absolute path"), std::string::npos) << msg;
}

TEST(ServeConfig, PipeAndLogFileKeys) {
  ServeConfig c;
  ApplyServeKey(c, "pipe-sddl", "D:P(A;;GA;;;SY)", "--pipe-sddl");
  EXPECT_EQ(c.pipe_sddl, "D:P(A;;GA;;;SY)");
  ApplyServeKey(c, "log-file-max-size", "1Mi", "--log-file-max-size");
  EXPECT_EQ(c.log_file_max_size, 1u << 20);
  ApplyServeKey(c, "log-file-count", "3", "--log-file-count");
  EXPECT_EQ(c.log_file_count, 3u);
  ApplyServeKey(c, "log-file", "/var/log/dxshim/dxshim.log", "--log-file");
  EXPECT_EQ(c.log_file, "/var/log/dxshim/dxshim.log");
  ApplyServeKey(c, "log-file", "-", "--log-file");
  EXPECT_EQ(c.log_file, "");  // stderr
  auto msg = ErrorOf([&] { ApplyServeKey(c, "pipe-sddl", "everyone", "--pipe-sddl"); });
  EXPECT_NE(msg.find("'everyone' is not a security descriptor in SDDL"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "log-file-max-size", "1Ki", "--log-file-max-size"); });
  EXPECT_NE(msg.find("'1Ki' is less than 64Ki"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "log-file-max-size", "big", "--log-file-max-size"); });
  EXPECT_NE(msg.find("'big' is not a quantity of bytes such as 16Gi"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "log-file-max-size", "20Ei", "--log-file-max-size"); });
  EXPECT_NE(msg.find("'20Ei' is too large"), std::string::npos) << msg;
  msg = ErrorOf([&] { ApplyServeKey(c, "log-file-max-size", "-1Mi", "--log-file-max-size"); });
  EXPECT_NE(msg.find("'-1Mi' is negative"), std::string::npos) << msg;
  ApplyServeKey(c, "log-file-max-size", "0.5Mi", "--log-file-max-size");
  EXPECT_EQ(c.log_file_max_size, 512u << 10);
  ApplyServeKey(c, "log-file-max-size", "1e6", "--log-file-max-size");
  EXPECT_EQ(c.log_file_max_size, 1000000u);
  msg = ErrorOf([&] { ApplyServeKey(c, "log-file-count", "0", "--log-file-count"); });
  EXPECT_NE(msg.find("from 1 to 1024"), std::string::npos) << msg;
}

// default-gpu-memory, gpu-memory-reserved and gpu-memory-unit are amounts of GPU memory as the
// dxshim.io/gpu-memory annotation is, and refuse with its words (devices::ParseGpuMemory's).
TEST(ServeConfig, GpuMemoryKeysSayWhatTheAnnotationSays) {
  const char* const keys[] = {"default-gpu-memory", "gpu-memory-reserved", "gpu-memory-unit"};
  const std::pair<const char*, std::uint64_t> valid[] = {
      {"1Mi", 1ull << 20},   {".5Gi", 512ull << 20},      {"1.5Gi", 1536ull << 20},
      {"0.5G", 500000000},   {"6e9", 6000000000ull},      {"6E9", 6000000000ull},
      {"+2Gi", 2ull << 30},  {"1048576", 1ull << 20},     {"1.0000001Mi", (1ull << 20) + 1},
      {"16Ti", 16ull << 40}, {"1048576000m", 1ull << 20},
  };
  for (const char* key : keys) {
    const auto flag = std::string("--") + key;
    for (const auto& [text, bytes] : valid) {
      ServeConfig c;
      if (std::string(key) == "gpu-memory-unit" && bytes > (1ull << 40)) {
        // A unit larger than any GPU: refused (a count of units times it must not overflow).
        EXPECT_EQ(
            ErrorOf([&, text = text] { ApplyServeKey(c, key, text, flag); }),
            flag + ": key 'gpu-memory-unit': '" + text + "' is more than 1Ti, larger than any GPU");
        continue;
      }
      ApplyServeKey(c, key, text, flag);
      const auto got = std::string(key) == "default-gpu-memory" ? c.policy.default_gpu_memory
                       : std::string(key) == "gpu-memory-unit"  ? c.policy.gpu_memory_unit
                                                                : c.policy.gpu_memory_reserved;
      EXPECT_EQ(got, bytes) << key << "=" << text;
    }
    for (const char* text :
         {"6GB", "Gi", "1e3Mi", "-2Gi", "-1", "0", "0Gi", "20Ei", "16777216Ti",
          "18446744073709551616", "6", "1048575", "1.5", "1Ki", "1023Ki", "1M", "1m", "6e3"}) {
      const bool zero = std::string(text) == "0" || std::string(text) == "0Gi";
      ServeConfig c;
      if (zero && std::string(key) == "gpu-memory-reserved") {
        ApplyServeKey(c, key, text, flag);  // the host may keep nothing
        EXPECT_EQ(c.policy.gpu_memory_reserved, 0u);
        continue;
      }
      std::string problem;
      try {
        devices::ParseGpuMemory(text);
      } catch (const std::invalid_argument& e) {
        problem = e.what();
      }
      ASSERT_FALSE(problem.empty()) << text;
      std::string expected = flag;
      expected.append(": key '").append(key).append("': '").append(text).append("' ");
      expected += problem;
      EXPECT_EQ(ErrorOf([&] { ApplyServeKey(c, key, text, flag); }), expected);
    }
  }
  // The words themselves, through a key.
  ServeConfig c;
  EXPECT_EQ(ErrorOf([&] { ApplyServeKey(c, "gpu-memory-unit", "1Ki", "--gpu-memory-unit"); }),
            "--gpu-memory-unit: key 'gpu-memory-unit': '1Ki' is less than 1Mi; give at least 1Mi "
            "of GPU memory, e.g. 512Mi or 6Gi");
  EXPECT_EQ(ErrorOf([&] { ApplyServeKey(c, "default-gpu-memory", "20Ei", "x.yaml"); }),
            "x.yaml: key 'default-gpu-memory': '20Ei' is too large: more than 64 bits of bytes, "
            "and no GPU has that much memory");
  EXPECT_EQ(ErrorOf([&] { ApplyServeKey(c, "gpu-memory-reserved", "6", "--gpu-memory-reserved"); }),
            "--gpu-memory-reserved: key 'gpu-memory-reserved': '6' has no unit: that is 6 bytes; "
            "write the unit, e.g. 6Gi or 6Mi");
  ApplyServeKey(c, "default-gpu-memory", "auto", "--default-gpu-memory");
  EXPECT_EQ(c.policy.default_gpu_memory, 0u);
}

TEST(ServeConfig, Durations) {
  EXPECT_EQ(ParseDuration("15"), std::chrono::seconds(15));
  EXPECT_EQ(ParseDuration("15s"), std::chrono::seconds(15));
  EXPECT_EQ(ParseDuration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(ParseDuration("2m"), std::chrono::minutes(2));
  EXPECT_THROW(ParseDuration("-1s"), ConfigError);
  EXPECT_THROW(ParseDuration("1h"), ConfigError);
  EXPECT_THROW(ParseDuration("s"), ConfigError);
  // At most a day. Found by tests/fuzz/serve_config_fuzz.cpp: a count of minutes or seconds past
  // 2^63 milliseconds overflowed (UBSan), and a smaller one still did as a wait's nanoseconds.
  EXPECT_EQ(ParseDuration("1440m"), std::chrono::hours(24));
  EXPECT_EQ(ParseDuration("86400"), std::chrono::hours(24));
  EXPECT_EQ(ParseDuration("86400000ms"), std::chrono::hours(24));
  for (const char* tooLong : {"1441m", "86401", "86400001ms", "9223372036854775807m",
                              "9223372036854775807", "153722867280912931m"}) {
    try {
      ParseDuration(tooLong);
      ADD_FAILURE() << tooLong << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                "'" + std::string(tooLong) +
                    "' is longer than 24h (1440m), the longest duration dxshim takes");
    }
  }
}

TEST(ServeConfig, SocketModes) {
  EXPECT_EQ(ParseSocketMode("0660"), 0660u);
  EXPECT_EQ(ParseSocketMode("600"), 0600u);
  EXPECT_THROW(ParseSocketMode("0680"), ConfigError);
  EXPECT_THROW(ParseSocketMode("01777"), ConfigError);
  EXPECT_THROW(ParseSocketMode("rw"), ConfigError);
}

}  // namespace
// A key with a control character is named escaped, not cut at a NUL (found by
// serve_config_fuzz: the message ended inside the key).
TEST(ServeConfig, AKeyWithAControlCharacterIsNamedEscaped) {
  ServeConfig config;
  try {
    ApplyServeKey(config, std::string_view("allow-na\0me\x1e", 12), "x", "config c.yaml line 1");
    FAIL() << "an unknown key is refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'allow-na\\x00me\\x1E'"), std::string::npos)
        << e.what();
  }
}

}  // namespace dxshim::config
