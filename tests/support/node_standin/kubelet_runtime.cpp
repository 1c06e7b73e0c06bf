// kubelet's CRI Version call every second over one gRPC connection, reconnecting with backoff.
#include "tests/support/node_standin/kubelet_runtime.h"

// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on

#include <algorithm>
#include <memory>
#include <random>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/grpc_client.h"
#include "tests/support/node_standin/pipe_endpoint.h"
#include "tests/support/node_standin/pipe_stream.h"
#include "tests/support/node_standin/protobuf_wire.h"
#include "tests/support/node_standin/service_runner.h"
#include "tests/support/node_standin/socket_stream.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;

namespace {

constexpr char kVersionMethod[] = "/runtime.v1.RuntimeService/Version";
constexpr DWORD kCallTimeoutMs = 10000;  // a runtime that never answers ends the connection

struct Connection {
  std::unique_ptr<ByteStream> stream;
  std::unique_ptr<GrpcClient> client;
};

// A new connection to ENDPOINT, or nothing with WHY.
std::unique_ptr<Connection> Dial(const std::wstring& endpoint, std::string& why) {
  auto connection = std::make_unique<Connection>();
  if (const auto pipe = PipePathOfEndpoint(endpoint)) {
    DWORD error = 0;
    // go-winio's DialPipe: a missing pipe fails at once; a busy one is waited for.
    const HANDLE handle = DialPipe(*pipe, 5000, false, error);
    if (handle == INVALID_HANDLE_VALUE) {
      why = "dial " + Utf8FromWide(pipe->c_str()) + ": error " + std::to_string(error);
      return nullptr;
    }
    connection->stream = std::make_unique<PipeStream>(handle, kCallTimeoutMs);
  } else if (Lower(endpoint.substr(0, 6)) == L"tcp://") {
    std::wstring host_port = endpoint.substr(6);
    host_port = host_port.substr(0, host_port.find(L'/'));
    const SOCKET s = ConnectTcp(host_port);
    if (s == INVALID_SOCKET) {
      why = "dial tcp " + Utf8FromWide(host_port.c_str()) + ": error " +
            std::to_string(WSAGetLastError());
      return nullptr;
    }
    connection->stream = std::make_unique<SocketStream>(s, kCallTimeoutMs);
  } else {
    why = "unsupported endpoint " + Utf8FromWide(endpoint.c_str());
    return nullptr;
  }
  connection->client = std::make_unique<GrpcClient>(*connection->stream, "localhost");
  if (!connection->client->Start(why)) return nullptr;
  return connection;
}

}  // namespace

void CallRuntimeEverySecond(const std::wstring& endpoint, const std::wstring& log) {
  const std::string pid = std::to_string(GetCurrentProcessId());
  std::string request;
  proto::PutBytes(request, 1, "0.1.0");
  std::unique_ptr<Connection> connection;
  std::mt19937 random(GetCurrentProcessId());
  double backoff_ms = 100;
  ULONGLONG next_dial = 0;
  do {
    std::string why;
    if (!connection && GetTickCount64() >= next_dial) {
      connection = Dial(endpoint, why);
      if (connection) {
        backoff_ms = 100;  // grpc-go: a connection made resets the backoff
      } else {
        std::uniform_real_distribution<double> jitter(0.8, 1.2);
        next_dial = GetTickCount64() + static_cast<ULONGLONG>(backoff_ms * jitter(random));
        backoff_ms = std::min(backoff_ms * 1.6, 3000.0);
      }
    }
    if (!connection) {
      AppendLine(log, "version " + pid + " unavailable " + (why.empty() ? "backing off" : why));
      continue;
    }
    GrpcResponse reply;
    if (!connection->client->Call(kVersionMethod, {}, request, reply, why)) {
      AppendLine(log, "version " + pid + " unavailable " + why);
      connection.reset();  // dialed again at the next call
      continue;
    }
    AppendLine(log, "version " + pid + " status " + std::to_string(reply.status) + " " +
                        reply.status_message);
  } while (WaitForSingleObject(g_stop, 1000) == WAIT_TIMEOUT);
}

}  // namespace dxshim::test::node_standin
