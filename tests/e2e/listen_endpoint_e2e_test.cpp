// The listening endpoint as an operator meets it: socket hygiene, configuration, bad input, exit.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "shim/proxy/unix_socket.h"
#include "tests/support/cri_client.h"
#include "tests/support/dxshim_process.h"
#include "tests/support/fake_runtime.h"
#include "tests/support/temp_dir.h"

namespace dxshim::test {
namespace {

namespace v1 = runtime::v1;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

class Socket : public ::testing::Test {
 protected:
  TempDir dir;
  FakeRuntime runtime{dir / "runtime.sock"};
};

TEST_F(Socket, CreatesParentDirectoriesAndUsesMode0660) {
  const auto path = dir / "run/dxshim/nested/dxshim.sock";
  DxshimProcess dxshim(path, runtime.socket(), dir / "dxshim.log");
  // The socket is made under a 0177 umask and answers from then on; dxshim sets the configured
  // mode next and logs "listening on" after that. Looked at before that line, the socket may
  // still be 0600 (seen once in ~20 runs under load).
  ASSERT_TRUE(
      WaitFor([&] { return dxshim.process().Log().find("listening on") != std::string::npos; },
              std::chrono::seconds(10)))
      << dxshim.process().Log();
  EXPECT_EQ(ModeOf(path), 0660u);
  CriClient client(path);
  v1::VersionResponse v;
  EXPECT_TRUE(client.Version(&v).ok());
  EXPECT_EQ(v.runtime_name(), "fake");
}

TEST_F(Socket, ConfigFileIsReadAndFlagsOverrideIt) {
  std::ofstream(dir / "dxshim.yaml") << "listen: " << (dir / "from-file.sock") << "\n"
                                     << "runtime: unix://" << runtime.socket() << "\n"
                                     << "socket-mode: \"0600\"\n";
  const auto path = dir / "from-flag.sock";
  Process p({DXSHIM_BINARY, "serve", "--config", dir / "dxshim.yaml", "--listen", path},
            dir / "dxshim.log");
  ASSERT_TRUE(WaitFor([&] { return UnixSocketAnswers(path); }, std::chrono::seconds(20)))
      << p.Log();
  EXPECT_FALSE(Exists(dir / "from-file.sock"));
  EXPECT_EQ(ModeOf(path), 0600u);
  CriClient client(path);
  v1::VersionResponse v;
  EXPECT_TRUE(client.Version(&v).ok());
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(std::chrono::seconds(30)), 0);
}

TEST_F(Socket, RefusesToStartWhereAnotherServerListens) {
  const auto path = dir / "dxshim.sock";
  DxshimProcess first(path, runtime.socket(), dir / "first.log");
  std::string output;
  EXPECT_EQ(RunDxshim({"serve", "--listen", path, "--runtime", runtime.socket()},
                      dir / "second.log", &output),
            1);
  EXPECT_NE(output.find("another server is already listening on " + path), std::string::npos)
      << output;
  // The first one is unharmed and still owns its socket.
  CriClient client(path);
  v1::VersionResponse v;
  EXPECT_TRUE(client.Version(&v).ok());
}

TEST_F(Socket, ReplacesAStaleSocket) {
  const auto path = dir / "dxshim.sock";
  {  // a socket file whose server died without removing it
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ::close(fd);
  }
  ASSERT_TRUE(Exists(path));
  ASSERT_FALSE(UnixSocketAnswers(path));
  DxshimProcess dxshim(path, runtime.socket(), dir / "dxshim.log");
  CriClient client(path);
  v1::VersionResponse v;
  EXPECT_TRUE(client.Version(&v).ok());
}

TEST_F(Socket, NeverReplacesSomethingThatIsNotASocket) {
  const auto path = dir / "precious.txt";
  std::ofstream(path) << "keep me";
  std::string output;
  EXPECT_EQ(RunDxshim({"serve", "--listen", path, "--runtime", runtime.socket()},
                      dir / "dxshim.log", &output),
            1);
  EXPECT_NE(output.find(path + " exists and is not a socket"), std::string::npos) << output;
  std::ifstream in(path);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "keep me");
}

TEST_F(Socket, RemovesItsSocketOnSigtermAndSigint) {
  for (int sig : {SIGTERM, SIGINT}) {
    const auto path = dir / ("exit-" + std::to_string(sig) + ".sock");
    DxshimProcess dxshim(path, runtime.socket(), dir / "dxshim.log");
    dxshim.process().Signal(sig);
    EXPECT_EQ(dxshim.process().Wait(std::chrono::seconds(30)), 0);
    EXPECT_FALSE(Exists(path));
  }
}

TEST_F(Socket, ListensOnTcp) {
  Process p(
      {DXSHIM_BINARY, "serve", "--listen", "tcp://127.0.0.1:0", "--runtime", runtime.socket()},
      dir / "tcp.log");
  std::smatch match;
  std::string log;
  const std::regex listening("listening on tcp://127\\.0\\.0\\.1:([0-9]+)");
  ASSERT_TRUE(WaitFor(
      [&] {
        log = p.Log();
        return std::regex_search(log, match, listening);
      },
      std::chrono::seconds(20)))
      << log;
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + match[1].str(), grpc::InsecureChannelCredentials());
  auto stub = v1::RuntimeService::NewStub(channel);
  v1::VersionResponse v;
  EXPECT_TRUE(stub->Version(Deadline(std::chrono::seconds(10)).get(), {}, &v).ok());
  EXPECT_EQ(v.runtime_name(), "fake");
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(std::chrono::seconds(30)), 0);
}

// `serve --check` validates what serve would use and exits without listening or logging to a file.
TEST_F(Socket, CheckValidatesWithoutListening) {
  std::ofstream(dir / "inventory.yaml") << "devices: []\n";
  std::ofstream(dir / "good.yaml")
      << "listen: " << (dir / "check.sock") << "\nlog-file: " << (dir / "logs/dxshim.log")
      << "\ndevice-source: inventory:" << (dir / "inventory.yaml") << "\n";
  std::string output;
  EXPECT_EQ(
      RunDxshim({"serve", "--config", dir / "good.yaml", "--check"}, dir / "check.log", &output), 0)
      << output;
  EXPECT_NE(output.find("configuration ok"), std::string::npos) << output;
  EXPECT_NE(output.find("0 GPU(s) from inventory:"), std::string::npos) << output;
  EXPECT_NE(output.find("log      " + (dir / "logs/dxshim.log")), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(dir / "check.sock"));
  EXPECT_FALSE(std::filesystem::exists(dir / "logs"));

  std::ofstream(dir / "inventory.yaml") << "devices: [{id: broken}]\n";
  std::filesystem::remove(dir / "check.log");
  EXPECT_EQ(
      RunDxshim({"serve", "--config", dir / "good.yaml", "--check"}, dir / "check.log", &output), 2)
      << output;
  EXPECT_NE(output.find("device source inventory:"), std::string::npos) << output;
  std::filesystem::remove(dir / "check.log");
  EXPECT_EQ(RunDxshim({"serve", "--config", dir / "good.yaml", "--placement", "random", "--check"},
                      dir / "check.log", &output),
            2)
      << output;
  EXPECT_NE(output.find("spread or pack"), std::string::npos) << output;
}

struct BadInvocation {
  std::vector<std::string> args;
  int exit_code;
  std::string message;
};

TEST_F(Socket, BadInputIsNamedInTheError) {
  const std::vector<BadInvocation> cases = {
      {{"serve", "--listen", "relative.sock"}, 2, "endpoint 'relative.sock'"},
      {{"serve", "--runtime", "tcp://nowhere"}, 2, "endpoint 'tcp://nowhere'"},
      {{"serve", "--log-level", "loud"}, 2, "log level 'loud'"},
      {{"serve", "--socket-mode", "0999"}, 2, "--socket-mode"},
      {{"serve", "--config", dir / "missing.yaml"}, 2, "missing.yaml: cannot read"},
      {{"serve", "--no-such-flag"}, 2, "no-such-flag"},
      {{"frobnicate"}, 2, "unknown command 'frobnicate'"},
      {{}, 2, "no command given"},
  };
  for (const auto& c : cases) {
    std::string output;
    EXPECT_EQ(RunDxshim(c.args, dir / "bad.log", &output), c.exit_code) << output;
    EXPECT_NE(output.find(c.message), std::string::npos) << output;
    std::filesystem::remove(dir / "bad.log");
  }
}

}  // namespace
}  // namespace dxshim::test
