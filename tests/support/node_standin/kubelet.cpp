// kubelet.exe: serves /healthz on its port and calls its runtime's CRI Version every second.
// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
#include <ws2tcpip.h>
// clang-format on

#include <cstddef>
#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/kubelet_config.h"
#include "tests/support/node_standin/kubelet_runtime.h"
#include "tests/support/node_standin/roles.h"
#include "tests/support/node_standin/service_runner.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

// The socket listening on ADDRESS:PORT, or INVALID_SOCKET with `unusable` set when ADDRESS is no
// IP address (else the bind or listen failed).
SOCKET Listen(const std::wstring& address, const std::wstring& port, bool& unusable) {
  std::wstring host = address;
  if (host.size() >= 2 && host.front() == L'[' && host.back() == L']')
    host = host.substr(1, host.size() - 2);
  ADDRINFOW hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  ADDRINFOW* found = nullptr;
  unusable = GetAddrInfoW(host.c_str(), port.c_str(), &hints, &found) != 0 || !found;
  if (unusable) return INVALID_SOCKET;
  SOCKET s = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  // No SO_REUSEADDR: a port someone else holds must fail to bind.
  if (s != INVALID_SOCKET && (bind(s, found->ai_addr, static_cast<int>(found->ai_addrlen)) != 0 ||
                              listen(s, SOMAXCONN) != 0)) {
    closesocket(s);
    s = INVALID_SOCKET;
  }
  FreeAddrInfoW(found);
  return s;
}

void AnswerHttp(SOCKET client) {
  const DWORD timeout_ms = 2000;  // one thread serves everyone: a silent client waits no longer
  setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, reinterpret_cast<const char*>(&timeout_ms),
             sizeof(timeout_ms));
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos &&
         request.find("\n\n") == std::string::npos && request.size() < 8192) {
    const int n = recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const std::string line = request.substr(0, request.find_first_of("\r\n"));
  const auto space = line.find(' ');
  const std::string method = line.substr(0, space);
  std::string target;
  if (space != std::string::npos) {
    const auto end = line.find(' ', space + 1);
    target = line.substr(space + 1, end == std::string::npos ? end : end - space - 1);
  }
  const std::string path = target.substr(0, target.find('?'));
  const bool healthz = method == "GET" && path == "/healthz";
  const std::string body = healthz ? "ok" : "404 page not found\n";
  const std::string response = std::string(healthz ? "HTTP/1.1 200 OK" : "HTTP/1.1 404 Not Found") +
                               "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  send(client, response.data(), static_cast<int>(response.size()), 0);
  shutdown(client, SD_SEND);
  closesocket(client);
}

void ServeHttp(SOCKET listener) {
  while (WaitForSingleObject(g_stop, 0) == WAIT_TIMEOUT) {
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(listener, &readable);
    timeval wait{0, 200 * 1000};
    if (select(0, &readable, nullptr, nullptr, &wait) <= 0) continue;
    const SOCKET client = accept(listener, nullptr, nullptr);
    if (client != INVALID_SOCKET) AnswerHttp(client);
  }
}

}  // namespace

DWORD Kubelet(const std::wstring&, const std::function<void()>& ready) {
  LogStart(L"starts.log");
  const auto args = SplitCommandLine(GetCommandLineW());
  const std::wstring address = FlagValue(args, {L"--healthz-bind-address"}).value_or(L"127.0.0.1");
  // The flags, else the --config file's containerRuntimeEndpoint and healthzPort (kubelet: flags
  // override the config file).
  auto endpoint = FlagValue(args, {L"--container-runtime-endpoint"});
  auto port_flag = FlagValue(args, {L"--healthz-port"});
  if (const auto config = FlagValue(args, {L"--config"}); config && (!endpoint || !port_flag)) {
    if (const auto text = ReadTextFile(OnTheCurrentDrive(*config))) {
      const auto from_file = ConfigRuntimeEndpoint(*text);
      if (from_file && !endpoint) endpoint = Widen(*from_file);
      const auto port_in_file = ConfigHealthzPort(*text);
      if (port_in_file && !port_flag) port_flag = Widen(*port_in_file);
    }
  }
  const std::wstring port = port_flag.value_or(L"10248");
  unsigned long port_number = 0;
  try {
    std::size_t used = 0;
    port_number = std::stoul(port, &used);
    if (used != port.size() || port_number > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    std::fprintf(stderr, "kubelet stand-in: invalid --healthz-port %s\n",
                 Utf8FromWide(port.c_str()).c_str());
    return 1;
  }
  SOCKET listener = INVALID_SOCKET;
  if (port_number != 0) {  // kubelet: 0 disables the healthz endpoint
    bool unusable = false;
    listener = Listen(address, std::to_wstring(port_number), unusable);
    if (listener == INVALID_SOCKET) {
      std::fprintf(stderr, "kubelet stand-in: %s %s:%lu\n",
                   unusable ? "invalid --healthz-bind-address" : "cannot listen on",
                   Utf8FromWide(address.c_str()).c_str(), port_number);
      return unusable ? 1 : 3;
    }
  }
  std::thread http;
  if (listener != INVALID_SOCKET) http = std::thread(ServeHttp, listener);
  std::thread runtime;
  if (endpoint) {
    runtime = std::thread(CallRuntimeEverySecond, *endpoint,
                          FolderOf(SelfPath()) + L"\\kubelet-calls.log");
  }
  ready();
  WaitForSingleObject(g_stop, INFINITE);
  if (http.joinable()) http.join();
  if (runtime.joinable()) runtime.join();
  if (listener != INVALID_SOCKET) closesocket(listener);
  return 0;
}

}  // namespace dxshim::test::node_standin
