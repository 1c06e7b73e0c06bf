// The named-pipe transport (shim/windows/pipe_*), cross-compiled with mingw and run under wine:
//   client --TCP--> PipeForwarder --pipe--> PipeAcceptor --socket pair--> echo server
// which is the path of a real node in both directions (kubelet -> dxshim's pipe -> a connection
// handed to dxshim's gRPC server; dxshim's gRPC channel -> forwarder -> containerd's pipe). The
// echo server stands in for the gRPC server (mock: it takes handed sockets as
// socket_bridge::HandToGrpcServer's gRPC does): the transport only moves bytes. Also the pair's
// own check (socket_pair_windows.h): a stranger's connection ahead of dxshim's is closed unread.
// Prints "ok:"/"FAILED:" lines; exit 0 when all pass.
// clang-format off
#include <winsock2.h>  // before windows.h
#include <windows.h>
// clang-format on
#include <ws2tcpip.h>
// after windows.h
#include <tlhelp32.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config/serve_defaults.h"
#include "shim/proxy/endpoint.h"
#include "shim/socket_bridge/socket_pair_windows.h"
#include "shim/windows/loopback.h"
#include "shim/windows/pipe_acceptor.h"
#include "shim/windows/pipe_dialer.h"
#include "shim/windows/pipe_transport.h"

namespace {

using dxshim::windows::PipeAcceptor;
using dxshim::windows::PipeForwarder;
using Clock = std::chrono::steady_clock;

int failures = 0;
int passes = 0;

void Check(bool ok, const std::string& what) {
  (ok ? passes : failures)++;
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  std::fflush(stdout);
}

// This process's open handles: GetProcessHandleCount, or where that says 0 (wine), the entries
// of the system handle table (NtQuerySystemInformation class 16) that belong to this process.
DWORD Handles() {
  DWORD n = 0;
  if (GetProcessHandleCount(GetCurrentProcess(), &n) && n > 0) return n;
  struct Entry {
    ULONG pid;
    BYTE type;
    BYTE flags;
    USHORT handle;
    PVOID object;
    ACCESS_MASK access;
  };
  using Query = LONG(WINAPI*)(ULONG, PVOID, ULONG, PULONG);
  const auto query = reinterpret_cast<Query>(reinterpret_cast<void*>(
      GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtQuerySystemInformation")));
  if (!query) return 0;
  std::vector<char> buffer(1 << 16);
  ULONG needed = 0;
  LONG status = 0;
  while ((status = query(16, buffer.data(), static_cast<ULONG>(buffer.size()), &needed)) ==
         static_cast<LONG>(0xC0000004L)) {  // STATUS_INFO_LENGTH_MISMATCH
    buffer.resize(buffer.size() * 2);
  }
  if (status != 0) return 0;
  ULONG count = 0;
  std::memcpy(&count, buffer.data(), sizeof(count));
  const auto* entries = reinterpret_cast<const Entry*>(buffer.data() + sizeof(void*));
  for (ULONG i = 0; i < count; ++i) {
    if (entries[i].pid == GetCurrentProcessId()) ++n;
  }
  return n;
}

// This process's threads (Toolhelp): every bridge and acceptor thread must be gone after Stop.
int Threads() {
  const HANDLE snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
  THREADENTRY32 entry{};
  entry.dwSize = sizeof(entry);
  int n = 0;
  for (BOOL more = Thread32First(snapshot, &entry); more; more = Thread32Next(snapshot, &entry)) {
    if (entry.th32OwnerProcessID == GetCurrentProcessId()) ++n;
  }
  CloseHandle(snapshot);
  return n;
}

// Handle counts, where the platform reports them. `slack`: handles a long-lived thread may open
// for good the first time it takes a path that only timing chooses (wine: a blocking socket call
// whose I/O the server completes makes that thread's ws2_32 wait event, once). A leak per
// connection or per cycle is far larger than that.
void CheckHandles(DWORD now, DWORD before, const std::string& what, DWORD slack = 0) {
  if (before == 0 && now == 0) {
    std::printf("skipped: %s (this platform reports no handle counts)\n", what.c_str());
    return;
  }
  Check(now <= before + slack, what + " (" + std::to_string(now) + " now, " +
                                   std::to_string(before) + " before, " + std::to_string(slack) +
                                   " allowed for first uses)");
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    Sleep(10);
  }
  return true;
}

// A connection to 127.0.0.1:`port`, from `from` (an IPv4 address and port; none: the system's
// choice), or INVALID_SOCKET.
SOCKET Connect(int port, const char* from_address = nullptr, std::uint16_t from_port = 0) {
  const SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (from_address != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, from_address, &local.sin_addr);
    local.sin_port = htons(from_port);
    if (bind(s, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      closesocket(s);
      return INVALID_SOCKET;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<u_short>(port));
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    closesocket(s);
    return INVALID_SOCKET;
  }
  return s;
}

bool SendAll(SOCKET s, const char* data, std::size_t size) {
  while (size > 0) {
    const int n = send(s, data, static_cast<int>(std::min<std::size_t>(size, 1 << 20)), 0);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool RecvAll(SOCKET s, char* data, std::size_t size) {
  while (size > 0) {
    const int n = recv(s, data, static_cast<int>(std::min<std::size_t>(size, 1 << 20)), 0);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Echoes every connection; a connection whose first bytes are "CLOSE" is closed at once instead
// (the backend going away mid-call).
class EchoServer {
 public:
  EchoServer() {
    listener_ = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int size = sizeof(a);
    bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(listener_, SOMAXCONN);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &size);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Accept(); });
  }
  ~EchoServer() {
    closesocket(listener_);
    thread_.join();
    while (live_ > 0) Sleep(10);
  }
  int port() const { return port_; }
  // Takes a handed connection (a socket pair's server end), as gRPC takes one in
  // HandToGrpcServer, and names it as gRPC would ("handed:N").
  std::string Take(SOCKET s) {
    const std::string name = "handed:echo-" + std::to_string(++handed_);
    {
      std::lock_guard lock(mutex_);
      last_peer_ = name;
    }
    Serve(s);
    return name;
  }
  // The peer of the connection accepted or taken last, as gRPC names it to dxshim's admission
  // hook ("ipv4:127.0.0.1:54321", "handed:echo-3").
  std::string last_peer() {
    std::lock_guard lock(mutex_);
    return last_peer_;
  }

 private:
  void Accept() {
    for (;;) {
      sockaddr_in peer{};
      int size = sizeof(peer);
      const SOCKET s = accept(listener_, reinterpret_cast<sockaddr*>(&peer), &size);
      if (s == INVALID_SOCKET) return;
      {
        char text[INET_ADDRSTRLEN] = {};
        inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
        std::lock_guard lock(mutex_);
        last_peer_ = "ipv4:" + std::string(text) + ":" + std::to_string(ntohs(peer.sin_port));
      }
      Serve(s);
    }
  }
  void Serve(SOCKET s) {
    {
      // Detached, so that a finished worker leaves no thread handle behind: the test counts
      // the process's handles.
      ++live_;
      std::thread([this, s] {
        std::vector<char> buf(64 * 1024);
        bool first = true;
        for (;;) {
          const int n = recv(s, buf.data(), static_cast<int>(buf.size()), 0);
          if (n <= 0) break;
          if (first && n >= 5 && std::string(buf.data(), 5) == "CLOSE") break;
          first = false;
          if (!SendAll(s, buf.data(), static_cast<std::size_t>(n))) break;
        }
        closesocket(s);
        --live_;
      }).detach();
    }
  }
  SOCKET listener_;
  int port_ = 0;
  std::string last_peer_;
  std::thread thread_;
  std::mutex mutex_;
  std::atomic<int> live_{0};
  std::atomic<int> handed_{0};
};

// The acceptor's backend as PipeTransport makes it: a socket pair whose server end `echo` takes.
PipeAcceptor::DialBackend DialEcho(EchoServer& echo) {
  return [&echo](std::string& served_as) -> SOCKET {
    std::string error;
    auto pair = dxshim::socket_bridge::MakeSocketPair(error);
    if (!pair) {
      std::printf("socket pair: %s\n", error.c_str());
      return INVALID_SOCKET;
    }
    served_as = echo.Take(pair->server_end.release());
    return pair->bridge_end.release();
  };
}

std::uint64_t Fnv(const char* data, std::size_t size, std::uint64_t h = 1469598103934665603ull) {
  for (std::size_t i = 0; i < size; ++i)
    h = (h ^ static_cast<unsigned char>(data[i])) * 1099511628211ull;
  return h;
}

// Runs this executable again with `args` and returns its exit code.
DWORD RunSelf(const std::string& args) {
  wchar_t self[MAX_PATH] = {};
  GetModuleFileNameW(nullptr, self, MAX_PATH);
  std::wstring command =
      L"\"" + std::wstring(self) + L"\" " + std::wstring(args.begin(), args.end());
  STARTUPINFOW startup{};
  startup.cb = sizeof(startup);
  PROCESS_INFORMATION process{};
  if (!CreateProcessW(nullptr, command.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr,
                      &startup, &process)) {
    return 99;
  }
  WaitForSingleObject(process.hProcess, 30000);
  DWORD code = 98;
  GetExitCodeProcess(process.hProcess, &code);
  CloseHandle(process.hProcess);
  CloseHandle(process.hThread);
  return code;
}

// The other process of the guarded-forwarder check: connects, sends, and exits 0 when the
// connection is closed without an answer.
int ConnectFromAnotherProcess(int port) {
  const SOCKET s = Connect(port);
  if (s == INVALID_SOCKET) return 2;
  char back[4];
  const bool answered = SendAll(s, "them", 4) && RecvAll(s, back, 4);
  closesocket(s);
  return answered ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "connect") {
    WSADATA wsa;
    WSAStartup(MAKEWORD(2, 2), &wsa);
    return ConnectFromAnotherProcess(std::atoi(argv[2]));
  }
  WSADATA wsa;
  WSAStartup(MAKEWORD(2, 2), &wsa);
  const std::string pipe = "\\\\.\\pipe\\dxshim-test-" + std::to_string(GetCurrentProcessId());
  EchoServer echo;
  const int threads_before = Threads();

  PipeAcceptor acceptor(pipe, dxshim::config::kDefaultPipeSddl, DialEcho(echo));
  acceptor.Start();
  PipeForwarder forwarder(pipe);
  const int port = forwarder.Start();

  // Another server on the same pipe name, and a broken SDDL, are refused with a reason.
  try {
    PipeAcceptor second(pipe, dxshim::config::kDefaultPipeSddl,
                        [](std::string&) { return INVALID_SOCKET; });
    second.Start();
    // Windows refuses FILE_FLAG_FIRST_PIPE_INSTANCE when the name exists; wine does not enforce
    // the flag, but answers WaitNamedPipe, which the acceptor asks first.
    Check(false, "a second server on the same pipe name is refused");
  } catch (const std::runtime_error& e) {
    Check(std::string(e.what()).find("already served") != std::string::npos,
          std::string("a second server on the same pipe name is refused: ") + e.what());
  }
  // A server told to wait for the pipe takes it the moment the other lets it go (a takeover's
  // dxshim, started as containerd stops), saying once that it waits.
  {
    const std::string busy = pipe + "-busy";
    auto holder = std::make_unique<PipeAcceptor>(busy, dxshim::config::kDefaultPipeSddl,
                                                 [](std::string&) { return INVALID_SOCKET; });
    holder->Start();
    PipeAcceptor waiting(busy, dxshim::config::kDefaultPipeSddl,
                         [](std::string&) { return INVALID_SOCKET; });
    int waits = 0;
    waiting.set_wait_for_pipe(std::chrono::seconds(20), [&waits] { ++waits; });
    std::string failure;
    std::thread start([&] {
      try {
        waiting.Start();
      } catch (const std::exception& e) {
        failure = e.what();
      }
    });
    Sleep(500);
    holder.reset();  // stops and closes its instances
    start.join();
    bool served = false;
    try {
      dxshim::windows::DialPipe(busy, std::chrono::milliseconds(2000));
      served = true;
    } catch (const std::exception&) {
    }
    Check(failure.empty() && waits == 1 && served,
          "a server waiting for its pipe serves it once the other stopped (" +
              (failure.empty() ? std::to_string(waits) + " wait(s) said" : failure) + ")");
  }
  try {
    PipeAcceptor bad("\\\\.\\pipe\\dxshim-bad-sddl", "D:(nonsense",
                     [](std::string&) { return INVALID_SOCKET; });
    bad.Start();
    Check(false, "an invalid SDDL is refused");
  } catch (const std::runtime_error& e) {
    Check(std::string(e.what()).find("not valid SDDL") != std::string::npos,
          std::string("an invalid SDDL is refused: ") + e.what());
  }
  try {
    dxshim::windows::DialPipe("\\\\.\\pipe\\dxshim-no-such-pipe", std::chrono::milliseconds(200));
    Check(false, "dialing a missing pipe fails");
  } catch (const std::runtime_error& e) {
    Check(std::string(e.what()).find("no such pipe") != std::string::npos,
          std::string("dialing a missing pipe fails: ") + e.what());
  }

  // The gRPC server behind the pipe takes only connections the acceptor hands it, and admits a
  // call only over one of them while its bridge lasts: a name it did not hand is refused.
  {
    auto& own = acceptor.backend_connections();
    std::string why;
    const SOCKET s = Connect(port);
    char back[4];
    const bool echoed = SendAll(s, "peer", 4) && RecvAll(s, back, 4);
    const std::string bridged = echo.last_peer();
    Check(echoed && bridged.rfind("handed:", 0) == 0 && own.Admits(bridged, why),
          "the server's peer on a piped connection is a live handed connection (" + bridged + ") " +
              why);
    Check(!own.Admits("handed:echo-999", why) && !own.Admits("ipv4:127.0.0.1:50000", why),
          "a name the acceptor did not hand is not admitted: " + why);
    closesocket(s);
    Check(WaitUntil([&] { return !own.Admits(bridged, why); }, std::chrono::seconds(10)),
          "a finished bridge's connection is no longer admitted: " + why);
  }

  // The pair's own check: a stranger that connected to the pair's short-lived listener ahead of
  // dxshim's own connection is closed unread and reported; dxshim's is the one taken.
  {
    std::uint16_t pair_port = 0;
    std::string error;
    auto listener = dxshim::socket_bridge::ListenLoopback(pair_port, error);
    const SOCKET stranger = Connect(pair_port);
    SendAll(stranger, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
    auto ours = dxshim::socket_bridge::ConnectLoopback(pair_port, error);
    std::vector<std::string> refusals;
    auto accepted = dxshim::socket_bridge::AcceptOwnConnection(
        listener.get(), dxshim::socket_bridge::ConnectionOf(ours.get()).value(), error,
        [&](const std::string& line) { refusals.push_back(line); });
    char got = 0;
    const bool paired = accepted.valid() && SendAll(ours.get(), "!", 1) &&
                        RecvAll(accepted.get(), &got, 1) && got == '!';
    // The stranger's connection was closed: its next read ends.
    const int after = recv(stranger, &got, 1, 0);
    Check(paired && refusals.size() == 1 &&
              refusals[0].find("closed, unread, a connection from 127.0.0.1:") == 0 && after <= 0,
          "a stranger ahead of dxshim's own connection is closed unread (" +
              (refusals.empty() ? error : refusals[0]) + ")");
    closesocket(stranger);
  }

  // A forwarder for dxshim serve bridges only connections from this process (the runtime's pipe
  // admits SYSTEM and Administrators, which dxshim is): another process's connection is closed.
  // The other process is this test started again ("connect PORT").
  {
    std::vector<std::string> warnings;  // written on bridge threads, read after Stop() joined them
    std::mutex warnings_lock;
    PipeForwarder guarded(pipe, dxshim::windows::ForwarderPeers::kThisProcess,
                          [&](const std::string& w) {
                            const std::lock_guard lock(warnings_lock);
                            warnings.push_back(w);
                          });
    const int guarded_port = guarded.Start();
    const DWORD child_code = RunSelf("connect " + std::to_string(guarded_port));
    // Checked once the client has sent: wine's TCP table names a socket's owner only once that
    // process holds the socket's Unix descriptor, which its first send normally fetches. When
    // wine's server sends for it instead (a timing matter; Windows always names the owner),
    // the connection is refused as ownerless: up to 3 attempts, each refusal counted and named.
    bool echoed = false;
    int attempts = 0;
    while (!echoed && attempts < 3) {
      ++attempts;
      const SOCKET s = Connect(guarded_port);
      char back[4] = {};
      echoed = SendAll(s, "mine", 4) && RecvAll(s, back, 4);
      closesocket(s);
    }
    guarded.Stop();  // joins the bridge threads: `warnings` is complete
    // The child's refusal, then one per attempt of ours that wine left ownerless.
    std::string said;
    int ownerless = 0;
    for (const auto& w : warnings) {
      said += (said.empty() ? "" : " | ") + w;
      ownerless += w.find("its owner is not in the TCP table") != std::string::npos ? 1 : 0;
    }
    Check(child_code == 0 && !warnings.empty() &&
              warnings.front().find("refused a connection") != std::string::npos,
          "another process's connection to the guarded forwarder is closed unanswered: " + said);
    Check(echoed && guarded.refused_connections() == static_cast<std::size_t>(attempts) &&
              static_cast<int>(warnings.size()) == attempts && ownerless >= attempts - 1,
          "this process's connection passes the guarded forwarder (attempt " +
              std::to_string(attempts) + ")");
  }

  // PipeTransport as dxshim serve wires it, the echo server standing in for dxshim's gRPC server.
  // Listen and runtime name the same pipe, so one round trip crosses both legs:
  //   client -> runtime forwarder -> pipe -> acceptor -> echo ("gRPC server")
  {
    const std::string name =
        "npipe://./pipe/dxshim-transport-" + std::to_string(GetCurrentProcessId());
    dxshim::Endpoint listen = dxshim::ParseEndpoint(name);
    dxshim::Endpoint runtime = dxshim::ParseEndpoint(name);
    std::vector<std::string> infos;
    std::vector<std::string> warnings;
    std::mutex log_mutex;
    auto log_to = [&](std::vector<std::string>& lines) {
      return [&](const std::string& line) {
        std::lock_guard lock(log_mutex);
        lines.push_back(line);
      };
    };
    dxshim::windows::PipeTransport transport(listen, runtime, dxshim::config::kDefaultPipeSddl,
                                             log_to(infos), log_to(warnings));
    Check(
        transport.serves_pipe() && listen.kind == dxshim::Endpoint::Kind::kPipe &&
            runtime.kind == dxshim::Endpoint::Kind::kTcp &&
            runtime.address.rfind("127.0.0.1:", 0) == 0,
        "the runtime's pipe becomes a loopback endpoint for gRPC, the served pipe stays (listen " +
            listen.ToString() + ", runtime " + runtime.ToString() + ")");
    dxshim::CriCallers cri_callers;
    transport.RecordCallers(&cri_callers);
    transport.Listen([&echo](dxshim::socket_bridge::Socket server_end, std::string&) {
      return echo.Take(server_end.release());
    });
    const int runtime_port = std::atoi(runtime.address.substr(10).c_str());
    // Up to 3 attempts, for the reason given at the guarded forwarder above (wine alone).
    SOCKET s = INVALID_SOCKET;
    char back[5] = {};
    bool echoed = false;
    for (int attempt = 0; attempt < 3 && !echoed; ++attempt) {
      if (s != INVALID_SOCKET) closesocket(s);
      s = Connect(runtime_port);
      echoed = SendAll(s, "hello", 5) && RecvAll(s, back, 5);
    }
    const std::string bridged = echo.last_peer();
    Check(echoed && std::string(back, 5) == "hello",
          "a round trip crosses the runtime forwarder, the pipe and the acceptor");
    Check(transport.Admits(bridged), "the gRPC server admits the bridge's peer " + bridged);
    const auto callers = cri_callers.Snapshot();
    Check(callers.size() == 1 && callers[0].client.program == "npipe-test.exe" &&
              callers[0].client.pid == GetCurrentProcessId() && callers[0].calls == 1,
          "the admitted call is counted for the pipe's client, this program (" +
              (callers.empty()
                   ? std::string("none")
                   : callers[0].client.program + " pid " + std::to_string(callers[0].client.pid)) +
              ")");
    const std::string stranger = "handed:echo-999";
    Check(!transport.Admits(stranger) && !transport.Admits("ipv4:10.1.2.3:40000") &&
              !transport.Admits("garbage"),
          "it refuses a name it did not hand (" + stranger + "), a remote peer and garbage");
    {
      std::lock_guard lock(log_mutex);
      std::erase_if(warnings, [](const std::string& w) {
        return w.find("its owner is not in the TCP table") != std::string::npos;
      });
      Check(warnings.size() == 3 && warnings[0].find("refused a call from " + stranger +
                                                     ": it did not come through " + name) == 0,
            "each refusal is logged: " + (warnings.empty() ? std::string("none") : warnings[0]));
      Check(infos.size() == 2,
            "the bridges' ports are logged (" + std::to_string(infos.size()) + " info lines)");
    }
    closesocket(s);
    transport.Stop();
    try {
      CloseHandle(dxshim::windows::DialPipe(
          "\\\\.\\pipe\\dxshim-transport-" + std::to_string(GetCurrentProcessId()),
          std::chrono::milliseconds(200)));
      Check(false, "Stop() closes the transport's pipe");
    } catch (const std::runtime_error& e) {
      Check(std::string(e.what()).find("no such pipe") != std::string::npos,
            "Stop() closes the transport's pipe");
    }
  }

  // 32 concurrent clients, 100 round trips each.
  {
    std::atomic<int> good{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 32; ++c) {
      clients.emplace_back([&, c] {
        const SOCKET s = Connect(port);
        if (s == INVALID_SOCKET) return;
        bool ok = true;
        for (int i = 0; i < 100 && ok; ++i) {
          const std::string msg = "client " + std::to_string(c) + " message " + std::to_string(i) +
                                  std::string(static_cast<std::size_t>(i * 10), 'x');
          std::string back(msg.size(), '\0');
          ok = SendAll(s, msg.data(), msg.size()) && RecvAll(s, back.data(), back.size()) &&
               back == msg;
        }
        closesocket(s);
        if (ok) ++good;
      });
    }
    for (auto& t : clients) t.join();
    Check(good == 32, "32 concurrent clients x 100 echo round trips (" + std::to_string(good) +
                          " clients all correct)");
  }

  // 64 MiB through both bridges and back, checked end to end.
  {
    const std::size_t total = 64u << 20;
    const SOCKET s = Connect(port);
    std::vector<char> chunk(1 << 20);
    std::uint64_t sent_hash = 1469598103934665603ull;
    std::uint64_t got_hash = 1469598103934665603ull;
    std::atomic<bool> send_ok{true};
    const auto start = Clock::now();
    std::thread sender([&] {
      std::uint32_t x = 12345;
      std::vector<char> data(1 << 20);
      for (std::size_t done = 0; done < total; done += data.size()) {
        for (auto& b : data) b = static_cast<char>(x = x * 1664525u + 1013904223u);
        sent_hash = Fnv(data.data(), data.size(), sent_hash);
        if (!SendAll(s, data.data(), data.size())) {
          send_ok = false;
          return;
        }
      }
    });
    bool recv_ok = true;
    for (std::size_t done = 0; done < total && recv_ok; done += chunk.size()) {
      recv_ok = RecvAll(s, chunk.data(), chunk.size());
      got_hash = Fnv(chunk.data(), chunk.size(), got_hash);
    }
    sender.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    closesocket(s);
    char rate[64];
    std::snprintf(rate, sizeof(rate), " (%.1f MiB/s each way under wine)", 64 / seconds);
    Check(send_ok && recv_ok && sent_hash == got_hash,
          std::string("64 MiB echoed through forwarder and acceptor, identical") + rate);
  }

  // Abrupt disconnects: a client resetting mid-transfer, a backend closing at once.
  {
    const SOCKET s = Connect(port);
    const std::string part(100000, 'p');
    SendAll(s, part.data(), part.size());
    linger hard{1, 0};
    setsockopt(s, SOL_SOCKET, SO_LINGER, reinterpret_cast<const char*>(&hard), sizeof(hard));
    closesocket(s);  // RST
    const SOCKET t = Connect(port);
    SendAll(t, "CLOSE", 5);
    char one = 0;
    const int n = recv(t, &one, 1, 0);
    closesocket(t);
    Check(n <= 0, "a backend that closes closes the client's connection (recv returned " +
                      std::to_string(n) + ")");
    Check(WaitUntil(
              [&] {
                return acceptor.active_connections() == 0 && forwarder.active_connections() == 0;
              },
              std::chrono::seconds(10)),
          "every bridge ends after the disconnects (acceptor " +
              std::to_string(acceptor.active_connections()) + ", forwarder " +
              std::to_string(forwarder.active_connections()) + ")");
  }
  // Handles must not grow with traffic or with Start/Stop cycles. Each is done once first: the
  // first use of an API may open handles for good (wine's, the C runtime's), which is no leak.
  const auto traffic = [&] {
    std::vector<std::thread> clients;
    for (int c = 0; c < 16; ++c) {
      clients.emplace_back([&] {
        const SOCKET s = Connect(port);
        char back[6];
        for (int i = 0; i < 10; ++i) SendAll(s, "round", 5) && RecvAll(s, back, 5);
        if (c % 4 == 0) {
          linger hard{1, 0};  // some leave with a reset
          setsockopt(s, SOL_SOCKET, SO_LINGER, reinterpret_cast<const char*>(&hard), sizeof(hard));
        }
        closesocket(s);
      });
    }
    for (auto& t : clients) t.join();
    const SOCKET t = Connect(port);
    SendAll(t, "CLOSE", 5);  // the backend goes away
    char one = 0;
    recv(t, &one, 1, 0);
    closesocket(t);
    WaitUntil(
        [&] { return acceptor.active_connections() == 0 && forwarder.active_connections() == 0; },
        std::chrono::seconds(10));
  };
  traffic();
  const DWORD after_one_round = Handles();
  for (int round = 0; round < 3; ++round) traffic();
  WaitUntil([&] { return Handles() <= after_one_round; }, std::chrono::seconds(10));
  CheckHandles(Handles(), after_one_round,
               "handles do not grow with traffic (3 more rounds of 17 connections)", 2);

  const auto cycle = [&](int n) {
    const std::string name = pipe + "-cycle-" + std::to_string(n);
    PipeAcceptor a(name, dxshim::config::kDefaultPipeSddl, DialEcho(echo));
    a.Start();
    PipeForwarder f(name);
    const SOCKET s = Connect(f.Start());
    char back[2];
    SendAll(s, "hi", 2) && RecvAll(s, back, 2);
    f.Stop();  // with the connection still open
    a.Stop();
    closesocket(s);
  };
  cycle(0);
  const DWORD after_one_cycle = Handles();
  for (int n = 1; n <= 3; ++n) cycle(n);
  WaitUntil([&] { return Handles() <= after_one_cycle; }, std::chrono::seconds(10));
  CheckHandles(Handles(), after_one_cycle,
               "handles do not grow with Start/Stop cycles (3 more, each with an open connection)");

  // A connection still open at Stop() is closed by it.
  const SOCKET lingering = Connect(port);
  SendAll(lingering, "hi", 2);
  char hi[2];
  RecvAll(lingering, hi, 2);
  forwarder.Stop();
  acceptor.Stop();
  char one = 0;
  Check(recv(lingering, &one, 1, 0) <= 0, "Stop() closes connections still open");
  closesocket(lingering);
  Check(Threads() == threads_before, "threads back to the baseline after Stop (" +
                                         std::to_string(Threads()) + " now, " +
                                         std::to_string(threads_before) + " before)");
  // Every server instance of the pipe is closed: nothing answers on the name any more.
  try {
    CloseHandle(dxshim::windows::DialPipe(pipe, std::chrono::milliseconds(200)));
    Check(false, "no pipe instance left open after Stop");
  } catch (const std::runtime_error& e) {
    Check(std::string(e.what()).find("no such pipe") != std::string::npos,
          std::string("no pipe instance left open after Stop: ") + e.what());
  }

  std::printf("%d passed, %d failed\n", passes, failures);
  WSACleanup();
  return failures == 0 ? 0 : 1;
}
