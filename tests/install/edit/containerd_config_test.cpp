// containerd's config.toml (version 2 and 3 shapes) has its [grpc] address read and set: in
// place (basic or literal string), as a new first key of an existing [grpc], or as a new [grpc]
// table; comments, multi-line values and strings that look like tables are not mistaken for
// tables; edits are idempotent and self-checked, and unreadable forms are refused by line.
#include "shim/install/edit/containerd_config.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "shim/install/edit/command_line.h"
#include "tests/install/edit_errors.h"

namespace dxshim::install {
namespace {

using test::ErrorOf;
using test::Has;

constexpr std::string_view kPipe = R"(\\.\pipe\dxshim-containerd)";

std::optional<std::string> Grpc(std::string_view toml) {
  return ReadServerAddress(toml, ContainerdServer::kGrpc);
}

std::string Set(std::string_view toml, std::string_view pipe = kPipe) {
  const std::string out = SetServerAddress(toml, ContainerdServer::kGrpc, pipe);
  EXPECT_EQ(SetServerAddress(out, ContainerdServer::kGrpc, pipe), out) << "not idempotent";
  EXPECT_EQ(Grpc(out), std::optional<std::string>(pipe));
  return out;
}

const std::string kVersion2 = R"(version = 2
root = "C:\\ProgramData\\containerd\\root"
state = "C:\\ProgramData\\containerd\\state"

[grpc]
  address = "\\\\.\\pipe\\containerd-containerd" # the default
  max_recv_message_size = 16777216

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "mcr.microsoft.com/oss/kubernetes/pause:3.9"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "C:\\Program Files\\containerd\\cni\\bin"
)";

TEST(NodeContainerdConfig, ReadsTheVersion2Address) {
  EXPECT_EQ(Grpc(kVersion2), R"(\\.\pipe\containerd-containerd)");
  EXPECT_EQ(kContainerdDefaultPipe, R"(\\.\pipe\containerd-containerd)");
}

TEST(NodeContainerdConfig, SetsABasicStringInPlace) {
  std::string expected = kVersion2;
  expected.replace(expected.find(R"("\\\\.\\pipe\\containerd-containerd")"),
                   std::string_view(R"("\\\\.\\pipe\\containerd-containerd")").size(),
                   R"("\\\\.\\pipe\\dxshim-containerd")");
  EXPECT_EQ(Set(kVersion2), expected);
  EXPECT_EQ(SetServerAddress(kVersion2, ContainerdServer::kGrpc, kContainerdDefaultPipe),
            kVersion2);
}

const std::string kVersion3 =
    "version = 3\r\n"
    "root = 'C:\\ProgramData\\containerd\\root'\r\n"
    "\r\n"
    "[grpc]\r\n"
    "  address = '\\\\.\\pipe\\containerd-containerd'\r\n"
    "  uid = 0\r\n"
    "\r\n"
    "[plugins.'io.containerd.cri.v1.runtime']\r\n"
    "  enable_selinux = false\r\n";

TEST(NodeContainerdConfig, KeepsALiteralStringAndCrlf) {
  EXPECT_EQ(Grpc(kVersion3), R"(\\.\pipe\containerd-containerd)");
  EXPECT_EQ(Set(kVersion3),
            "version = 3\r\n"
            "root = 'C:\\ProgramData\\containerd\\root'\r\n"
            "\r\n"
            "[grpc]\r\n"
            "  address = '\\\\.\\pipe\\dxshim-containerd'\r\n"
            "  uid = 0\r\n"
            "\r\n"
            "[plugins.'io.containerd.cri.v1.runtime']\r\n"
            "  enable_selinux = false\r\n");
  // A path a literal string cannot carry is written as a basic string.
  EXPECT_EQ(Set("[grpc]\naddress = 'x'", R"(\\.\pipe\it's)"),
            R"([grpc]
address = "\\\\.\\pipe\\it's")");
}

TEST(NodeContainerdConfig, InsertsTheAddressIntoAnExistingGrpcTable) {
  EXPECT_EQ(Set("version = 2\n\n[grpc] # the CRI endpoint\n  max_recv_message_size = 16777216\n"
                "  uid = 0\n\n[ttrpc]\n  address = \"\"\n"),
            "version = 2\n\n[grpc] # the CRI endpoint\n"
            "  address = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\n"
            "  max_recv_message_size = 16777216\n  uid = 0\n\n[ttrpc]\n  address = \"\"\n");
  EXPECT_EQ(Set("version = 2\r\n[grpc]\r\n[debug]\r\n    level = \"info\"\r\n"),
            "version = 2\r\n[grpc]\r\n"
            "    address = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\r\n"
            "[debug]\r\n    level = \"info\"\r\n");
  EXPECT_EQ(Set("[grpc]"), "[grpc]\naddress = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"");
  EXPECT_EQ(Set("[ \"grpc\" ]\n"),
            "[ \"grpc\" ]\naddress = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\n");
}

TEST(NodeContainerdConfig, AppendsAGrpcTable) {
  EXPECT_FALSE(Grpc("version = 2\n[plugins]\n  x = 1\n"));
  EXPECT_EQ(Set("version = 2\n\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
                "    sandbox_image = \"pause:3.9\"\n"),
            "version = 2\n\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
            "    sandbox_image = \"pause:3.9\"\n\n[grpc]\n"
            "    address = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\n");
  EXPECT_EQ(Set("version = 3\r\nroot = 'C:\\x'"),
            "version = 3\r\nroot = 'C:\\x'\r\n\r\n[grpc]\r\n"
            "address = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\r\n");
  EXPECT_EQ(Set(""), "[grpc]\naddress = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\n");
  EXPECT_EQ(
      Set("[grpc.tcp]\n  x = 1\n\n"),
      "[grpc.tcp]\n  x = 1\n\n[grpc]\n  address = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\n");
}

TEST(NodeContainerdConfig, CommentsArraysAndStringsAreNotTables) {
  const std::string toml =
      "# [grpc]\n"
      "# address = 'commented'\n"
      "version = 2\n"
      "motd = \"\"\"\n"
      "[grpc]\n"
      "address = 'inside a string'\n"
      "\"\"\"\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n"
      "  mirrors = [\n"
      "    \"a\", # first\n"
      "    [\"[grpc]\", 'b'],\n"
      "  ]\n"
      "  headers = { x = \"[grpc]\", y = [1, 2] }\n"
      "  when = 1979-05-27 07:32:00Z\n"
      "[grpc]\n"
      "  address = \"\\\\\\\\.\\\\pipe\\\\c\"  # real\n";
  EXPECT_EQ(Grpc(toml), R"(\\.\pipe\c)");
  std::string expected = toml;
  const std::string_view old = "\\\\\\\\.\\\\pipe\\\\c";
  expected.replace(expected.rfind(old), old.size(), "\\\\\\\\.\\\\pipe\\\\dxshim-containerd");
  EXPECT_EQ(Set(toml), expected);
}

// containerd 2.3's `containerd config default` (version 4): the address in its gRPC server
// plugin's table; a top-level [grpc] there is not read, and is left alone.
TEST(NodeContainerdConfig, Version4KeepsTheAddressInTheGrpcPluginTable) {
  const std::string v4 =
      "version = 4\n\n[grpc]\n  address = 'ignored'\n\n"
      "[plugins]\n  [plugins.'io.containerd.server.v1.grpc']\n"
      "    address = '\\\\.\\pipe\\containerd-containerd'\n    max_recv_message_size = 16777216\n";
  EXPECT_EQ(Grpc(v4), "\\\\.\\pipe\\containerd-containerd");
  const std::string moved = Set(v4);
  EXPECT_EQ(moved,
            "version = 4\n\n[grpc]\n  address = 'ignored'\n\n"
            "[plugins]\n  [plugins.'io.containerd.server.v1.grpc']\n"
            "    address = '\\\\.\\pipe\\dxshim-containerd'\n"
            "    max_recv_message_size = 16777216\n");
  EXPECT_EQ(Grpc("version = 4\n[grpc]\naddress = 'x'\n"), std::nullopt);
  EXPECT_EQ(Set("version = 4\n"),
            "version = 4\n\n[plugins.'io.containerd.server.v1.grpc']\naddress = "
            "\"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\n");
}

// AgentBaker @06836ee staging/cse/windows/containerdtemplate.toml (containerd 1.6 and 1.7 on
// AKS; no `version`, so version 1) and containerd2template.toml (2.x, version 3), their first
// tables as the CSE writes them (Out-File: CRLF): [ttrpc] address is empty, so containerd serves
// TTRPC at the gRPC pipe + ".ttrpc" (containerd v1.7.34 cmd/containerd/command/main.go).
const std::string kAksVersion1 =
    "root = \"C:\\\\ProgramData\\\\containerd\\\\root\"\r\n"
    "state = \"C:\\\\ProgramData\\\\containerd\\\\state\"\r\n"
    "\r\n"
    "[grpc]\r\n"
    "  address = \"\\\\\\\\.\\\\pipe\\\\containerd-containerd\"\r\n"
    "  max_recv_message_size = 16777216\r\n"
    "  max_send_message_size = 16777216\r\n"
    "\r\n"
    "[ttrpc]\r\n"
    "  address = \"\"\r\n"
    "\r\n"
    "[debug]\r\n"
    "  address = \"\"\r\n"
    "  level = \"info\"\r\n";
const std::string kAksVersion3 =
    "version = 3\r\n"
    "root = 'C:\\ProgramData\\containerd\\root'\r\n"
    "state = 'C:\\ProgramData\\containerd\\state'\r\n"
    "\r\n"
    "[grpc]\r\n"
    "  address = '\\\\.\\pipe\\containerd-containerd'\r\n"
    "  max_recv_message_size = 16777216\r\n"
    "  max_send_message_size = 16777216\r\n"
    "\r\n"
    "[ttrpc]\r\n"
    "  address = ''\r\n"
    "\r\n"
    "[debug]\r\n"
    "  address = ''\r\n"
    "  level = 'info'\r\n";

std::string Replaced(std::string text, std::string_view from, std::string_view to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(NodeContainerdConfig, TheTakeoverMovesGrpcAndKeepsTtrpcWhereItWas) {
  const std::string_view old_ttrpc = R"(\\.\pipe\containerd-containerd.ttrpc)";
  for (const auto& aks : {kAksVersion1, kAksVersion3}) {
    EXPECT_EQ(ServedPipes(aks).grpc, kContainerdDefaultPipe);
    EXPECT_EQ(ServedPipes(aks).ttrpc, old_ttrpc);
    const std::string moved = MoveGrpcKeepTtrpc(aks, kPipe);
    EXPECT_EQ(ServedPipes(moved).grpc, kPipe);
    EXPECT_EQ(ServedPipes(moved).ttrpc, old_ttrpc) << "TTRPC followed the gRPC pipe:\n" << moved;
    EXPECT_EQ(MoveGrpcKeepTtrpc(moved, kPipe), moved) << "not idempotent";
    // Put back, the file is what it was only by its bytes: the record restores those.
    EXPECT_NE(moved, aks);
  }
  // Only the two values change, each in its own style (basic strings stay basic, literal ones
  // literal).
  std::string expected = Replaced(kAksVersion1, "[ttrpc]\r\n  address = \"\"",
                                  "[ttrpc]\r\n  address = \"\\\\\\\\.\\\\pipe\\\\"
                                  "containerd-containerd.ttrpc\"");
  expected = Replaced(expected, "\\\\\\\\.\\\\pipe\\\\containerd-containerd\"\r\n  max_recv",
                      "\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\r\n  max_recv");
  EXPECT_EQ(MoveGrpcKeepTtrpc(kAksVersion1, kPipe), expected);
  expected = Replaced(kAksVersion3, "[ttrpc]\r\n  address = ''",
                      "[ttrpc]\r\n  address = '\\\\.\\pipe\\containerd-containerd.ttrpc'");
  expected = Replaced(expected, "'\\\\.\\pipe\\containerd-containerd'\r\n  max_recv",
                      "'\\\\.\\pipe\\dxshim-containerd'\r\n  max_recv");
  EXPECT_EQ(MoveGrpcKeepTtrpc(kAksVersion3, kPipe), expected);
}

TEST(NodeContainerdConfig, ATtrpcTableIsAddedWhereThereIsNone) {
  EXPECT_EQ(
      MoveGrpcKeepTtrpc("version = 2\n\n[grpc]\n  address = \"\\\\\\\\.\\\\pipe\\\\c\"\n", kPipe),
      "version = 2\n\n[grpc]\n  address = \"\\\\\\\\.\\\\pipe\\\\dxshim-containerd\"\n\n"
      "[ttrpc]\n  address = \"\\\\\\\\.\\\\pipe\\\\c.ttrpc\"\n");
  // No address anywhere: both follow containerd's default pipe.
  EXPECT_EQ(ServedPipes("").ttrpc, std::string(kContainerdDefaultPipe) + ".ttrpc");
  // A TTRPC address of its own is kept as it is.
  const std::string own = "[grpc]\naddress = 'a'\n[ttrpc]\naddress = 'b'\n";
  EXPECT_EQ(ServedPipes(own).ttrpc, "b");
  EXPECT_EQ(MoveGrpcKeepTtrpc(own, "c"), "[grpc]\naddress = 'c'\n[ttrpc]\naddress = 'b'\n");
}

// containerd 2.3's version 4: TTRPC has a server plugin table of its own, and without one it is
// served at the DEFAULT pipe + ".ttrpc" even when the gRPC plugin has another address
// (cmd/containerd/server/server.go v2.3.4).
TEST(NodeContainerdConfig, Version4PinsTtrpcInItsServerPluginTable) {
  const std::string v4 =
      "version = 4\n\n[plugins]\n  [plugins.'io.containerd.server.v1.grpc']\n"
      "    address = '\\\\.\\pipe\\custom'\n";
  EXPECT_EQ(ServedPipes(v4).grpc, R"(\\.\pipe\custom)");
  EXPECT_EQ(ServedPipes(v4).ttrpc, R"(\\.\pipe\containerd-containerd.ttrpc)");
  EXPECT_EQ(MoveGrpcKeepTtrpc(v4, kPipe),
            "version = 4\n\n[plugins]\n  [plugins.'io.containerd.server.v1.grpc']\n"
            "    address = '\\\\.\\pipe\\dxshim-containerd'\n\n"
            "[plugins.'io.containerd.server.v1.ttrpc']\n"
            "    address = \"\\\\\\\\.\\\\pipe\\\\containerd-containerd.ttrpc\"\n");
  EXPECT_EQ(ReadServerAddress("version = 4\n[ttrpc]\naddress = 'x'\n", ContainerdServer::kTtrpc),
            std::nullopt);
}

TEST(NodeContainerdConfig, DecodesEscapes) {
  EXPECT_EQ(Grpc("[grpc]\naddress = \"\\u005c\\u005C.\\\\pipe\\\\x\\t\"\n"), "\\\\.\\pipe\\x\t");
}

TEST(NodeContainerdConfig, RefusesWhatItCannotReadSafely) {
  EXPECT_TRUE(Has(ErrorOf([] { Set("version = 2\ngrpc.address = \"x\"\n"); }),
                  "line 2: grpc is set by a dotted key"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("grpc = { address = \"x\" }\n"); }),
                  "line 1: grpc is set as a value (an inline table?)"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("[grpc]\n[x]\n[grpc]\n"); }),
                  "line 3: [grpc] is defined a second time"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("[grpc]\naddress = 'a'\naddress = 'b'\n"); }),
                  "line 3: [grpc] address is set a second time"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("[[grpc]]\n"); }), "array of tables"));
  EXPECT_TRUE(
      Has(ErrorOf([] { Set("[grpc]\naddress = 5\n"); }), "line 2: [grpc] address is not a string"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("[grpc]\naddress = '''x'''\n"); }), "multi-line string"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("[grpc]\naddress = \"x\n"); }), "line 2: unterminated string"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("[grpc\n"); }), "line 1: a table header without"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("a = 1 b = 2\n"); }), "line 1: unexpected text"));
  EXPECT_TRUE(Has(ErrorOf([] { Set("x = [1, 2\n"); }), "line 1: an array without"));
  EXPECT_TRUE(Has(ErrorOf([] { Grpc("just words\n"); }), "line 1: expected `key = value`"));
  EXPECT_TRUE(Has(ErrorOf([] { Grpc("[grpc]\naddress = \"\\q\"\n"); }), "unknown escape"));
}

}  // namespace
}  // namespace dxshim::install
