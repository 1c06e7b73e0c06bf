// The rules the node stand-ins take from the programs they stand in for, natively: Go's flag
// package parsing kube-log-runner's flags (both dash forms, =value or the next word, bools, "--",
// the first non-flag word, each error as Go words it) and os/exec's Windows command line for its
// child; containerd's gRPC and TTRPC addresses and root for each config version (AKS's version 1
// template with an empty [ttrpc] address, k3s's version 3 with a //./pipe address, a version 4
// config with and without the ttrpc plugin table, legacy tables ignored in version 4, --address
// and --root, an empty gRPC address refused); the container table's text round trip; containerd's
// API messages (field numbers of containers.proto, tasks.proto, events.proto, task.proto);
// kubelet's containerRuntimeEndpoint in a JSON or YAML config file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/node_standin/container_table.h"
#include "tests/support/node_standin/containerd_config.h"
#include "tests/support/node_standin/containerd_messages.h"
#include "tests/support/node_standin/go_command_line.h"
#include "tests/support/node_standin/kubelet_config.h"

namespace dxshim::test::node_standin {
namespace {

const std::vector<GoFlag> kLogRunnerFlags = {{"flush-interval"},    {"log-file"},
                                             {"log-file-size"},     {"log-file-age"},
                                             {"also-stdout", true}, {"redirect-stderr", true}};

TEST(GoFlags, StopAtTheFirstWordThatIsNoFlag) {
  // image-builder's kubelet service (kubeadm_capz research: tasks/kubelet.yml).
  const auto parsed =
      ParseGoFlags({"--log-file=C:/var/log/kubelet/kubelet.log", "c:\\k\\kubelet.exe",
                    "--windows-service", "--enforce-node-allocatable="},
                   kLogRunnerFlags);
  EXPECT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.values.at("log-file"), "C:/var/log/kubelet/kubelet.log");
  EXPECT_EQ(parsed.rest, (std::vector<std::string>{"c:\\k\\kubelet.exe", "--windows-service",
                                                   "--enforce-node-allocatable="}));
}

TEST(GoFlags, OneOrTwoDashesValuesAndBools) {
  auto parsed = ParseGoFlags(
      {"-log-file", "x.log", "-also-stdout", "--redirect-stderr=0", "-", "y"}, kLogRunnerFlags);
  EXPECT_EQ(parsed.values.at("log-file"), "x.log");
  EXPECT_EQ(parsed.values.at("also-stdout"), "true");
  EXPECT_EQ(parsed.values.at("redirect-stderr"), "false");
  EXPECT_EQ(parsed.rest, (std::vector<std::string>{"-", "y"}));
  parsed = ParseGoFlags({"--", "-also-stdout"}, kLogRunnerFlags);
  EXPECT_TRUE(parsed.values.empty());
  EXPECT_EQ(parsed.rest, std::vector<std::string>{"-also-stdout"});
}

TEST(GoFlags, ErrorsAsTheFlagPackageWordsThem) {
  EXPECT_EQ(ParseGoFlags({"--log-file"}, kLogRunnerFlags).error,
            "flag needs an argument: -log-file");
  EXPECT_EQ(ParseGoFlags({"--v=2", "kubelet.exe"}, kLogRunnerFlags).error,
            "flag provided but not defined: -v");
  EXPECT_EQ(ParseGoFlags({"---x"}, kLogRunnerFlags).error, "bad flag syntax: ---x");
  EXPECT_EQ(ParseGoFlags({"-also-stdout=maybe"}, kLogRunnerFlags).error,
            "invalid boolean value \"maybe\" for -also-stdout: parse error");
  EXPECT_TRUE(ParseGoFlags({"-h"}, kLogRunnerFlags).help);
}

TEST(GoCommandLine, EscapesAsOsExecDoes) {
  EXPECT_EQ(GoEscapeArg(""), "\"\"");
  EXPECT_EQ(GoEscapeArg("c:\\k\\kubelet.exe"), "c:\\k\\kubelet.exe");
  EXPECT_EQ(GoEscapeArg("a b"), "\"a b\"");
  EXPECT_EQ(GoEscapeArg("a\"b"), "a\\\"b");
  EXPECT_EQ(GoEscapeArg("x\\\"y z\\"), "\"x\\\\\\\"y z\\\\\"");
  EXPECT_EQ(GoCommandLine({"C:\\k\\kubelet.exe", "--resolv-conf=", "--node-labels=a=b c"}),
            "C:\\k\\kubelet.exe --resolv-conf= \"--node-labels=a=b c\"");
}

std::optional<ContainerdServerConfig> Server(const std::optional<std::string>& toml,
                                             const std::optional<std::string>& address = {},
                                             const std::optional<std::string>& root = {}) {
  std::string error;
  auto config = ContainerdServer(toml, address, root, "\\\\.\\pipe\\containerd-containerd",
                                 "C:\\ProgramData\\containerd\\root", error);
  if (!config) config = ContainerdServerConfig{-1, error, "", ""};
  return config;
}

TEST(ContainerdServer, DefaultsWithoutAConfig) {
  const auto config = Server(std::nullopt);
  EXPECT_EQ(config->grpc_address, "\\\\.\\pipe\\containerd-containerd");
  EXPECT_EQ(config->ttrpc_address, "\\\\.\\pipe\\containerd-containerd.ttrpc");
  EXPECT_EQ(config->root, "C:\\ProgramData\\containerd\\root");
}

TEST(ContainerdServer, VersionsOneToThreeDeriveTtrpcFromGrpc) {
  // AKS's containerdtemplate.toml (no version): [ttrpc] address = "".
  auto config = Server(
      "root = \"C:\\\\ProgramData\\\\containerd\\\\root2\"\n\n[grpc]\n  address = "
      "\"\\\\\\\\.\\\\pipe\\\\containerd-containerd\"\n\n[ttrpc]\n  address = \"\"\n");
  EXPECT_EQ(config->grpc_address, "\\\\.\\pipe\\containerd-containerd");
  EXPECT_EQ(config->ttrpc_address, "\\\\.\\pipe\\containerd-containerd.ttrpc");
  EXPECT_EQ(config->root, "C:\\ProgramData\\containerd\\root2");
  // k3s's version 3 template on Windows: a //./pipe address, no [ttrpc].
  config = Server("version = 3\n[grpc]\n  address = \"//./pipe/containerd-containerd\"\n");
  EXPECT_EQ(config->version, 3);
  EXPECT_EQ(config->ttrpc_address, "//./pipe/containerd-containerd.ttrpc");
  config = Server("version = 2\n[ grpc ]\naddress = '\\\\.\\pipe\\moved'  # moved\n");
  EXPECT_EQ(config->grpc_address, "\\\\.\\pipe\\moved");
  EXPECT_EQ(config->ttrpc_address, "\\\\.\\pipe\\moved.ttrpc");
  config = Server("version = 2\n[grpc]\naddress = '\\\\.\\pipe\\moved'\n[ttrpc]\naddress = 'x'\n");
  EXPECT_EQ(config->ttrpc_address, "x");
  config = Server("version = 2\n[grpc]\naddress = '\\\\.\\pipe\\moved'\n", "\\\\.\\pipe\\flag");
  EXPECT_EQ(config->grpc_address, "\\\\.\\pipe\\flag");
  EXPECT_EQ(config->ttrpc_address, "\\\\.\\pipe\\flag.ttrpc");
  EXPECT_EQ(Server("[grpc]\naddress = ''\n")->grpc_address, "grpc address cannot be empty");
}

TEST(ContainerdServer, VersionFourUsesTheServerPlugins) {
  const std::string grpc_only =
      "version = 4\n[grpc]\naddress = 'legacy'\n[ttrpc]\naddress = 'legacy.ttrpc'\n"
      "[plugins.'io.containerd.server.v1.grpc']\n  address = '\\\\.\\pipe\\moved'\n";
  auto config = Server(grpc_only);
  EXPECT_EQ(config->grpc_address, "\\\\.\\pipe\\moved");
  EXPECT_EQ(config->ttrpc_address, "\\\\.\\pipe\\containerd-containerd.ttrpc");
  config = Server(grpc_only + "[plugins.\"io.containerd.server.v1.ttrpc\"]\naddress = 't'\n");
  EXPECT_EQ(config->ttrpc_address, "t");
  config = Server(grpc_only, "\\\\.\\pipe\\flag");
  EXPECT_EQ(config->grpc_address, "\\\\.\\pipe\\flag");
  EXPECT_EQ(config->ttrpc_address, "\\\\.\\pipe\\flag.ttrpc");
  config = Server(grpc_only + "[plugins.'io.containerd.server.v1.ttrpc']\n  uid = 0\n",
                  "\\\\.\\pipe\\flag", "D:\\root");
  EXPECT_EQ(config->ttrpc_address, "\\\\.\\pipe\\containerd-containerd.ttrpc");
  EXPECT_EQ(config->root, "D:\\root");
}

TEST(ContainerTable, RoundTripsThroughText) {
  const std::vector<ContainerRecord> containers = {
      {"default", "web", "mcr.microsoft.com/windows/nanoserver:ltsc2022", "io.containerd.runhcs.v1",
       "running", 120, 0, 118, "\\\\.\\pipe\\ProtectedPrefix\\Administrators\\containerd-shim-x"},
      {"k8s.io", "odd\tid\nwith\\", "", "", "", 0, 0, 0, ""},
      {"default", "done", "img", "r", "stopped", 7, 1, 6, "p"}};
  const auto parsed = ParseContainers(SerializeContainers(containers) + "garbage line\n");
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0].shim_address, containers[0].shim_address);
  EXPECT_EQ(parsed[1].id, containers[1].id);
  EXPECT_EQ(parsed[2].task, "stopped");
  EXPECT_EQ(parsed[2].exit_status, 1u);
  EXPECT_EQ(parsed[2].shim_pid, 6u);
}

TEST(ContainerdMessages, FieldNumbersOfTheProtos) {
  // tasks.proto KillRequest: container_id = 1, signal = 3 (SIGTERM, 15).
  EXPECT_EQ(EncodeKill("ab", 15), std::string("\x0a\x02"
                                              "ab"
                                              "\x18\x0f"));
  // containers.proto Container: id = 1, image = 3, runtime = 4 { name = 1 }.
  EXPECT_EQ(EncodeContainer({"c", "i", "r"}), std::string("\x0a\x01"
                                                          "c"
                                                          "\x1a\x01"
                                                          "i"
                                                          "\x22\x03\x0a\x01"
                                                          "r"));
  const auto list = DecodeContainerList(EncodeContainerList({{"a", "img", ""}, {"b", "", "rt"}}));
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].runtime, "rt");
  const std::string exit = EncodeTaskExit({"web", "web", 120, 1}, 1700000000);
  const auto forward = DecodeForwardRequest(
      EncodeForwardRequest({1700000000, "default", kTaskExitTopic, kTaskExitType, exit}));
  ASSERT_TRUE(forward);
  EXPECT_EQ(forward->ns, "default");
  EXPECT_EQ(forward->topic, "/tasks/exit");
  EXPECT_EQ(forward->type_url, "containerd.events.TaskExit");
  EXPECT_EQ(forward->unix_seconds, 1700000000);
  const auto decoded = DecodeTaskExit(forward->event);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->container_id, "web");
  EXPECT_EQ(decoded->pid, 120u);
  EXPECT_EQ(decoded->exit_status, 1u);
  EXPECT_EQ(ShimDeleteExitStatus(EncodeShimDeleteResponse(120, 3)), 3u);
}

TEST(KubeletConfig, RuntimeEndpointInJsonOrYaml) {
  // EKS's kubelet-config.json (CRLF, indented) with the endpoint an install writes.
  EXPECT_EQ(
      ConfigRuntimeEndpoint("{\r\n  \"kind\": \"KubeletConfiguration\",\r\n  "
                            "\"containerRuntimeEndpoint\" : \"npipe:\\/\\/.\\/pipe\\/dxshim\",\r\n"
                            "  \"clusterDomain\": \"cluster.local\"\r\n}\r\n"),
      "npipe://./pipe/dxshim");
  EXPECT_EQ(ConfigRuntimeEndpoint("{\"kind\": \"KubeletConfiguration\"}"), std::nullopt);
  EXPECT_EQ(ConfigRuntimeEndpoint("kind: KubeletConfiguration\ncontainerRuntimeEndpoint: "
                                  "npipe://./pipe/dxshim  # dxshim\r\n"),
            "npipe://./pipe/dxshim");
  EXPECT_EQ(ConfigRuntimeEndpoint("containerRuntimeEndpoint: 'npipe:////./pipe/x'\n"),
            "npipe:////./pipe/x");
  EXPECT_EQ(ConfigRuntimeEndpoint("nested:\n  containerRuntimeEndpoint: npipe://./pipe/no\n"),
            std::nullopt);
}

TEST(KubeletConfig, HealthzPortInJsonOrYaml) {
  EXPECT_EQ(ConfigHealthzPort("{\"kind\": \"KubeletConfiguration\", \"healthzPort\": 0}"), "0");
  EXPECT_EQ(ConfigHealthzPort("healthzBindAddress: 127.0.0.1\r\nhealthzPort: 10248\r\n"), "10248");
  EXPECT_EQ(ConfigHealthzPort("kind: KubeletConfiguration\n"), std::nullopt);
}

}  // namespace
}  // namespace dxshim::test::node_standin
