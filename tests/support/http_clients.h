// Misbehaving HTTP clients for tests of dxshim's metrics endpoint: one raw connection from a
// chosen loopback source address, and a crowd of them that keeps its connections open.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

namespace dxshim::test {

// One TCP connection to `host`:`port` from the loopback address `source` (127.0.0.1, 127.0.0.2,
// ...: any of 127/8 is this machine). Closed when destroyed.
class RawConnection {
 public:
  // A `receive_buffer` other than 0 sets the socket's receive buffer (SO_RCVBUF) to that size.
  RawConnection(const std::string& source, const std::string& host, int port,
                int receive_buffer = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool Send(const std::string& bytes) const;
  // Everything the server sends until it closes the connection, or what came within `timeout`;
  // `closed` says whether it was closed.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout, bool* closed);
  // Sends `bytes` one at a time, `interval` apart, until the server answers (then reads until it
  // closes, 5 s at most) or 10 s after the last byte; returns the answer, and in `took` the time
  // from the start of the connection (before connect(), so that the server cannot have accepted
  // it earlier) to the answer's first bytes.
  std::string Trickle(const std::string& bytes, std::chrono::milliseconds interval,
                      std::chrono::milliseconds* took);

 private:
  std::chrono::steady_clock::time_point connecting_since_;  // before fd_: read before connect()
  int fd_ = -1;
};

// `count` connections from `source`, each sending `request` and then nothing, and reading
// nothing; whenever the server closes one, it is opened again (at most once every 50 ms). With
// `small_receive_buffer` each takes at most 4 KiB before the server's sends would block.
class ClientCrowd {
 public:
  ClientCrowd(const std::string& source, const std::string& host, int port, std::string request,
              std::size_t count, bool small_receive_buffer);
  ~ClientCrowd();  // closes every connection
  ClientCrowd(const ClientCrowd&) = delete;
  ClientCrowd& operator=(const ClientCrowd&) = delete;

  std::size_t connects() const { return connects_.load(); }  // including the first ones

 private:
  void Run(const std::string& source, const std::string& host, int port, std::size_t count,
           bool small);

  std::string request_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> connects_{0};
  std::thread thread_;
};

}  // namespace dxshim::test
