// The stand-ins' gRPC and TTRPC codecs against each other over a socket pair (the real gRPC
// peers are grpc C++ under wine: node_standin_test.sh): unary gRPC calls on one HTTP/2
// connection with their metadata, a 1 MiB request and a 1 MiB response (more than HTTP/2's
// initial 65535-octet windows: both sides must give window back and wait for it), error
// statuses with a percent-encoded message, a non-gRPC content type answered 415, a server that
// goes away; TTRPC unary calls with their metadata and timeout, an error status, a message over
// ttrpc's 4 MiB refused; protobuf fields read back as written.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "tests/support/node_standin/byte_stream.h"
#include "tests/support/node_standin/grpc_client.h"
#include "tests/support/node_standin/grpc_server.h"
#include "tests/support/node_standin/http2_frames.h"
#include "tests/support/node_standin/protobuf_wire.h"
#include "tests/support/node_standin/ttrpc.h"

namespace dxshim::test::node_standin {
namespace {

class FdStream : public ByteStream {
 public:
  explicit FdStream(int fd) : fd_(fd) {}
  ~FdStream() override { close(fd_); }
  bool ReadExact(char* data, std::size_t size) override {
    while (size > 0) {
      const ssize_t n = read(fd_, data, size);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }
  bool Write(const char* data, std::size_t size) override {
    while (size > 0) {
      const ssize_t n = send(fd_, data, size, MSG_NOSIGNAL);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }
  void ShutdownBoth() const { shutdown(fd_, SHUT_RDWR); }

 private:
  int fd_;
};

struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    // Small socket buffers: a side that does not read makes the other wait, as a pipe would.
    // A side left waiting (a window never given back) fails after 10 s instead of hanging.
    for (const int fd : fds) {
      int size = 16384;
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
      timeval wait{10, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
    }
    client = std::make_unique<FdStream>(fds[0]);
    server = std::make_unique<FdStream>(fds[1]);
  }
  std::unique_ptr<FdStream> client;
  std::unique_ptr<FdStream> server;
};

// An echo service: the request back, its metadata's x-echo value as the status message of
// /echo.Echo/Fail, which fails with NOT_FOUND.
GrpcResponse Echo(const GrpcRequest& request) {
  if (request.path == "/echo.Echo/Fail") {
    const std::string* echo = FindHeader(request.metadata, "x-echo");
    return {kGrpcNotFound, echo ? *echo : "", ""};
  }
  return {kGrpcOk, "", request.message};
}

TEST(GrpcUnary, CallsOnOneConnectionWithWindowsSpentAndGivenBack) {
  Pair pair;
  std::string server_error;
  bool served = false;
  std::jthread server([&] { served = ServeGrpc(*pair.server, Echo, server_error); });
  GrpcClient client(*pair.client, "localhost");
  std::string error;
  ASSERT_TRUE(client.Start(error)) << error;
  for (const std::size_t size : {std::size_t{0}, std::size_t{10}, std::size_t{1} << 20,
                                 std::size_t{70000}, std::size_t{3}}) {
    std::string request(size, '\0');
    for (std::size_t i = 0; i < size; ++i) request[i] = static_cast<char>(i * 7 + size);
    GrpcResponse reply;
    ASSERT_TRUE(client.Call("/echo.Echo/Echo", {}, request, reply, error)) << error;
    EXPECT_EQ(reply.status, kGrpcOk) << reply.status_message;
    EXPECT_EQ(reply.message, request) << size;
  }
  GrpcResponse reply;
  ASSERT_TRUE(
      client.Call("/echo.Echo/Fail", {{"x-echo", "not here: 100% gone\n"}}, "", reply, error))
      << error;
  EXPECT_EQ(reply.status, kGrpcNotFound);
  EXPECT_EQ(reply.status_message, "not here: 100% gone\n");
  pair.client->ShutdownBoth();
  server.join();
  EXPECT_TRUE(served) << server_error;
}

TEST(GrpcUnary, ANonGrpcContentTypeIsAnswered415) {
  Pair pair;
  std::string server_error;
  std::jthread server([&] { ServeGrpc(*pair.server, Echo, server_error); });
  http2::Connection connection(*pair.client, http2::Connection::Side::kClient);
  std::string error;
  ASSERT_TRUE(connection.Start(error));
  ASSERT_TRUE(connection.SendHeaders(1,
                                     {{":method", "POST"},
                                      {":scheme", "http"},
                                      {":path", "/echo.Echo/Echo"},
                                      {"content-type", "application/json"}},
                                     true, error));
  http2::StreamEvent event;
  ASSERT_TRUE(connection.Next(event, error)) << error;
  EXPECT_EQ(event.kind, http2::StreamEvent::kGotHeaders);
  EXPECT_TRUE(event.end_stream);
  ASSERT_NE(FindHeader(event.headers, ":status"), nullptr);
  EXPECT_EQ(*FindHeader(event.headers, ":status"), "415");
  pair.client->ShutdownBoth();
  server.join();
}

TEST(GrpcUnary, AServerThatGoesAwayFailsTheCall) {
  Pair pair;
  std::jthread server([&] {
    // Reads the preface and the request, then closes without an answer.
    char buffer[256];
    pair.server->ReadExact(buffer, http2::kClientPreface.size());
    pair.server->ShutdownBoth();
  });
  GrpcClient client(*pair.client, "localhost");
  std::string error;
  client.Start(error);
  GrpcResponse reply;
  EXPECT_FALSE(client.Call("/echo.Echo/Echo", {}, "x", reply, error));
  EXPECT_FALSE(error.empty());
  server.join();
  EXPECT_FALSE(client.Call("/echo.Echo/Echo", {}, "x", reply, error));  // unusable from now on
}

TEST(Ttrpc, UnaryCallsWithMetadataAndStatus) {
  Pair pair;
  std::string server_error;
  bool served = false;
  std::jthread server([&] {
    served = ServeTtrpc(
        *pair.server,
        [](const TtrpcRequest& request, std::string& payload) -> TtrpcStatus {
          if (request.method == "Fail") return {9, "failed precondition"};
          payload = request.service + "/" + request.method + " " + request.payload + " " +
                    std::to_string(request.timeout_nano);
          for (const auto& [key, value] : request.metadata) {
            payload += " ";
            payload += key;
            payload += "=";
            payload += value;
          }
          return {};
        },
        server_error);
  });
  TtrpcClient client(*pair.client);
  TtrpcStatus status;
  std::string payload;
  std::string error;
  ASSERT_TRUE(client.Call({"containerd.services.events.ttrpc.v1.Events",
                           "Forward",
                           "abc",
                           5000000000,
                           {{"containerd-namespace-ttrpc", "k8s.io"}}},
                          status, payload, error))
      << error;
  EXPECT_EQ(status.code, 0);
  EXPECT_EQ(payload,
            "containerd.services.events.ttrpc.v1.Events/Forward abc 5000000000 "
            "containerd-namespace-ttrpc=k8s.io");
  ASSERT_TRUE(client.Call({"s", "Fail", "", 0, {}}, status, payload, error)) << error;
  EXPECT_EQ(status.code, 9);
  EXPECT_EQ(status.message, "failed precondition");
  // channel.go's limit: the server refuses a message over 4 MiB and ends the connection.
  TtrpcMessage big{5, kTtrpcRequest, 0, std::string((4 << 20) + 1, 'x')};
  std::jthread writer([&] { WriteTtrpcMessage(*pair.client, big); });
  server.join();
  pair.client->ShutdownBoth();
  writer.join();
  EXPECT_FALSE(served);
  EXPECT_NE(server_error.find("over ttrpc's 4 MiB"), std::string::npos) << server_error;
}

TEST(TtrpcMessage, HeaderIsTenOctetsBigEndian) {
  // PROTOCOL.md "Message Frame": length, stream id, type, flags; here a Response on stream 3.
  Pair pair;
  ASSERT_TRUE(WriteTtrpcMessage(*pair.client, {3, kTtrpcResponse, 0, "ab"}));
  char bytes[12];
  ASSERT_TRUE(pair.server->ReadExact(bytes, sizeof(bytes)));
  EXPECT_EQ(std::string(bytes, sizeof(bytes)), std::string("\0\0\0\2\0\0\0\3\2\0ab", 12));
}

TEST(ProtobufWire, FieldsReadBackAsWritten) {
  std::string message;
  proto::PutUint(message, 3, 300);
  proto::PutBytes(message, 1, "id");
  proto::PutUint(message, 4, 0xFFFFFFFFFFFFFFFFull);
  proto::PutBytes(message, 1, "last");  // proto3: the last one wins
  EXPECT_EQ(proto::VarintField(message, 3), 300u);
  EXPECT_EQ(proto::VarintField(message, 4), 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(proto::BytesField(message, 1), "last");
  EXPECT_EQ(proto::BytesField(message, 2), std::nullopt);
  EXPECT_EQ(proto::BytesField(message.substr(0, message.size() - 1), 1), std::nullopt);
  EXPECT_EQ(message.substr(0, 3), std::string("\x18\xac\x02", 3));  // field 3 varint 300
}

}  // namespace
}  // namespace dxshim::test::node_standin
