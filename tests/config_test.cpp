#include <gtest/gtest.h>

#include <fstream>

#include "config/serve_config.h"
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

TEST(ServeConfig, TheShippedExampleIsValidAndStatesTheDefaults) {
  ServeConfig c;
  ApplyServeConfigFile(c, DXSHIM_SOURCE_DIR "/deploy/examples/dxshim.yaml");
  const ServeConfig defaults;
  EXPECT_EQ(c.listen, defaults.listen);
  EXPECT_EQ(c.runtime, defaults.runtime);
  EXPECT_EQ(c.socket_mode, defaults.socket_mode);
  EXPECT_EQ(c.log_level, defaults.log_level);
  EXPECT_EQ(c.shutdown_grace, defaults.shutdown_grace);
  EXPECT_EQ(c.reconnect_backoff_max, defaults.reconnect_backoff_max);
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
}

TEST(ServeConfig, FlagErrorsNameTheFlag) {
  ServeConfig c;
  auto msg = ErrorOf([&] { ApplyServeKey(c, "shutdown-grace", "soon", "--shutdown-grace"); });
  EXPECT_NE(msg.find("--shutdown-grace"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'soon'"), std::string::npos) << msg;
}

TEST(ServeConfig, Durations) {
  EXPECT_EQ(ParseDuration("15"), std::chrono::seconds(15));
  EXPECT_EQ(ParseDuration("15s"), std::chrono::seconds(15));
  EXPECT_EQ(ParseDuration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(ParseDuration("2m"), std::chrono::minutes(2));
  EXPECT_THROW(ParseDuration("-1s"), ConfigError);
  EXPECT_THROW(ParseDuration("1h"), ConfigError);
  EXPECT_THROW(ParseDuration("s"), ConfigError);
}

TEST(ServeConfig, SocketModes) {
  EXPECT_EQ(ParseSocketMode("0660"), 0660u);
  EXPECT_EQ(ParseSocketMode("600"), 0600u);
  EXPECT_THROW(ParseSocketMode("0680"), ConfigError);
  EXPECT_THROW(ParseSocketMode("01777"), ConfigError);
  EXPECT_THROW(ParseSocketMode("rw"), ConfigError);
}

}  // namespace
}  // namespace dxshim::config
