#include "tests/support/http_clients.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace dxshim::test {
namespace {

sockaddr_in Address(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &a.sin_addr);
  return a;
}

int Connect(const std::string& source, const std::string& host, int port, int receive_buffer) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  const auto from = Address(source, 0);
  const auto to = Address(host, port);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

RawConnection::RawConnection(const std::string& source, const std::string& host, int port,
                             int receive_buffer)
    : connecting_since_(std::chrono::steady_clock::now()),
      fd_(Connect(source, host, port, receive_buffer)) {}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::Send(const std::string& bytes) const {
  return fd_ >= 0 && ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
                         static_cast<ssize_t>(bytes.size());
}

std::string RawConnection::ReadUntilClosed(std::chrono::milliseconds timeout, bool* closed) {
  std::string got;
  *closed = false;
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (fd_ >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buffer[4096];
    const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    got.append(buffer, static_cast<std::size_t>(n));
  }
  return got;
}

std::string RawConnection::Trickle(const std::string& bytes, std::chrono::milliseconds interval,
                                   std::chrono::milliseconds* took) {
  const auto rounds = bytes.size() + static_cast<std::size_t>(std::chrono::seconds(10) / interval);
  for (std::size_t i = 0; fd_ >= 0 && i < rounds; ++i) {
    if (i < bytes.size()) ::send(fd_, &bytes[i], 1, MSG_NOSIGNAL);
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(interval.count())) > 0) {
      *took = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - connecting_since_);
      bool closed = false;
      return ReadUntilClosed(std::chrono::seconds(5), &closed);
    }
  }
  *took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                connecting_since_);
  return {};
}

ClientCrowd::ClientCrowd(const std::string& source, const std::string& host, int port,
                         std::string request, std::size_t count, bool small_receive_buffer)
    : request_(std::move(request)),
      thread_([this, source, host, port, count, small_receive_buffer] {
        Run(source, host, port, count, small_receive_buffer);
      }) {}

ClientCrowd::~ClientCrowd() {
  stop_ = true;
  thread_.join();
}

void ClientCrowd::Run(const std::string& source, const std::string& host, int port,
                      std::size_t count, bool small) {
  std::vector<int> fds(count, -1);
  std::vector<pollfd> polled;
  while (!stop_.load()) {
    const auto tick = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    for (auto& fd : fds) {
      if (fd >= 0) continue;
      fd = Connect(source, host, port, small ? 4096 : 0);
      if (fd < 0) continue;
      ++connects_;
      ::send(fd, request_.data(), request_.size(), MSG_NOSIGNAL);
    }
    // Nothing is read: the server closing its end (POLLRDHUP, seen without reading) is the only
    // thing waited for.
    polled.clear();
    for (const int fd : fds) polled.push_back({fd, POLLRDHUP, 0});
    ::poll(polled.data(), polled.size(), 50);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i] >= 0 && (polled[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
        ::close(fds[i]);
        fds[i] = -1;
      }
    }
    std::this_thread::sleep_until(tick);
  }
  for (const int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace dxshim::test
