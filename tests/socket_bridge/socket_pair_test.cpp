// A connection dxshim makes to itself and hands to a gRPC server in this process
// (shim/socket_bridge/socket_pair.h, grpc_handoff.h), over real sockets and a real gRPC server
// that listens on no port: calls over the handed connection reach the service, and the peer name
// the service sees is the one HandToGrpcServer returned (what OwnConnections lists); the door
// hands nothing while closed.
#include "shim/socket_bridge/socket_pair.h"

#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <mutex>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "shim/socket_bridge/grpc_handoff.h"
#include "shim/socket_bridge/own_connections.h"

namespace dxshim::socket_bridge {
namespace {

namespace v1beta1 = ::v1beta1;

// A stand-in service: the Registration service of the device plugin API, which records the peer
// of each call.
class RecordingRegistration : public v1beta1::Registration::Service {
 public:
  grpc::Status Register(grpc::ServerContext* context, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty*) override {
    std::lock_guard lock(mutex_);
    peers_.push_back(context->peer());
    names_.push_back(request->resource_name());
    return grpc::Status::OK;
  }
  std::vector<std::string> peers() {
    std::lock_guard lock(mutex_);
    return peers_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> peers_;
  std::vector<std::string> names_;
};

TEST(SocketPair, BothEndsTalkToEachOther) {
  std::string error;
  auto pair = MakeSocketPair(error);
  ASSERT_TRUE(pair) << error;
  ASSERT_EQ(Send(pair->bridge_end.get(), "ping", 4), 4);
  char buffer[4] = {};
  ASSERT_EQ(Receive(pair->server_end.get(), buffer, sizeof buffer), 4);
  EXPECT_EQ(std::string(buffer, 4), "ping");
  // An AF_UNIX pair has no TCP port for anybody to reach.
  EXPECT_EQ(LocalPort(pair->server_end.get()), 0);
}

TEST(SocketPair, AGrpcServerWithoutAPortAnswersOverAHandedConnection) {
  RecordingRegistration service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  ASSERT_TRUE(server);

  OwnConnections own;
  std::string error;
  auto pair = MakeSocketPair(error);
  ASSERT_TRUE(pair) << error;
  const auto served_as = HandToGrpcServer(*server, std::move(pair->server_end), error);
  ASSERT_FALSE(served_as.empty()) << error;
  EXPECT_TRUE(served_as.starts_with("fd:")) << served_as;
  const auto listed = own.Add(served_as, {42, "kubelet"});

  const int client_fd = pair->bridge_end.release();
  auto channel = grpc::CreateInsecureChannelFromFd("handed", client_fd);
  auto stub = v1beta1::Registration::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1beta1::RegisterRequest request;
  request.set_resource_name("dxshim.io/gpu");
  v1beta1::Empty response;
  const auto status = stub->Register(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();

  ASSERT_EQ(service.peers().size(), 1u);
  EXPECT_EQ(service.peers().front(), served_as);
  std::string refusal;
  BridgeClient client;
  EXPECT_TRUE(own.Admits(service.peers().front(), refusal, &client)) << refusal;
  EXPECT_EQ(client.pid, 42u);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

// The door: nothing is handed before it opens or once it closed (what ProxyServer and the
// device plugin close before Server::Shutdown); a refused pair's server end is closed, so the
// bridge's client sees its connection end.
TEST(HandoffDoor, HandsOnlyWhileOpen) {
  RecordingRegistration service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  ASSERT_TRUE(server);
  HandoffDoor door;
  const auto refused_end = [&door] {
    std::string error;
    auto pair = MakeSocketPair(error);
    EXPECT_TRUE(pair) << error;
    EXPECT_EQ(door.Hand(std::move(pair->server_end), error), "");
    EXPECT_EQ(error, "the gRPC server is not serving");
    char byte = 0;
    return Receive(pair->bridge_end.get(), &byte, 1);  // 0: the other end was closed
  };
  EXPECT_EQ(refused_end(), 0);
  door.Open(*server);
  std::string error;
  auto pair = MakeSocketPair(error);
  ASSERT_TRUE(pair) << error;
  EXPECT_TRUE(door.Hand(std::move(pair->server_end), error).starts_with("fd:")) << error;
  door.Close();
  EXPECT_EQ(refused_end(), 0);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

}  // namespace
}  // namespace dxshim::socket_bridge
