#include "tests/support/loopback_impostor.h"

#include <arpa/inet.h>
#include <grpcpp/create_channel_posix.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/support/process.h"

namespace dxshim::test {

std::vector<std::uint16_t> LoopbackClientPorts(std::uint16_t server_port) {
  // "0100007F:D431" is 127.0.0.1:54321 (the address's bytes as a little-endian word); state 01 is
  // ESTABLISHED.
  char wanted_remote[16];
  std::snprintf(wanted_remote, sizeof wanted_remote, "0100007F:%04X", server_port);
  std::vector<std::uint16_t> ports;
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (remote == wanted_remote && state == "01" && local.rfind("0100007F:", 0) == 0) {
      ports.push_back(static_cast<std::uint16_t>(std::stoul(local.substr(9), nullptr, 16)));
    }
  }
  return ports;
}

int ConnectFrom(const std::string& address, std::uint16_t port, bool reuse_address,
                std::uint16_t server_port, std::string& error) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  if (reuse_address) ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_port = htons(port);
  ::inet_pton(AF_INET, address.c_str(), &local.sin_addr);
  if (::bind(s, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    error = "bind " + address + ":" + std::to_string(port) + ": " + std::strerror(errno);
    ::close(s);
    return -1;
  }
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(server_port);
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s, reinterpret_cast<sockaddr*>(&server), sizeof server) != 0) {
    error = "connect to 127.0.0.1:" + std::to_string(server_port) + ": " + std::strerror(errno);
    ::close(s);
    return -1;
  }
  return s;
}

std::string CurlGrpcImpostor(std::uint16_t from_port, std::uint16_t server_port,
                             const std::string& method, bool message, const std::string& work_dir) {
  std::vector<std::string> argv = {"curl",        "-s",       "-v", "--http2-prior-knowledge",
                                   "--interface", "127.0.0.2"};
  if (from_port != 0) argv.insert(argv.end(), {"--local-port", std::to_string(from_port)});
  argv.insert(argv.end(),
              {"-X", "POST", "-H", "content-type: application/grpc", "-H", "te: trailers"});
  if (message) {
    const auto empty = work_dir + "/empty-grpc";
    std::ofstream(empty, std::ios::binary).write("\0\0\0\0\0", 5);  // an empty message, framed
    argv.insert(argv.end(), {"--data-binary", "@" + empty});
  }
  argv.push_back("http://127.0.0.1:" + std::to_string(server_port) + method);
  static int runs = 0;
  Process curl(argv, work_dir + "/curl-" + std::to_string(++runs) + ".log");
  EXPECT_EQ(curl.Wait(std::chrono::seconds(30)), 0) << curl.Log();
  return curl.Log();
}

std::shared_ptr<grpc::Channel> ChannelOver(int fd) {
  return grpc::CreateCustomInsecureChannelFromFd("impostor", fd, grpc::ChannelArguments());
}

}  // namespace dxshim::test
