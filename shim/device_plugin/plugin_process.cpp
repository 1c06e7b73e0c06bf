#include "shim/device_plugin/plugin_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace dxshim::device_plugin {

PluginProcess::PluginProcess(std::vector<std::string> args) : args_(std::move(args)) {}

PluginProcess::~PluginProcess() { Stop(); }

void PluginProcess::Start() {
  if (supervisor_.joinable()) return;
  supervisor_ = std::thread([this] { Supervise(); });
}

void PluginProcess::Stop() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGTERM);
    if (!cv_.wait_for(lock, std::chrono::seconds(5), [this] { return exited_; })) {
      spdlog::warn("device plugin: process {} did not stop within 5 s; killing it", pid_);
      ::kill(pid_, SIGKILL);
    }
  }
  cv_.notify_all();
  lock.unlock();
  if (supervisor_.joinable()) supervisor_.join();
}

pid_t PluginProcess::Spawn(int& log_fd) {
  int pipe_fds[2];
  // Close-on-exec: no other process serve starts inherits the pipe (dup2 onto the child's
  // stderr clears the flag there).
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  // The child's stdin: one byte from serve for each change of who holds GPUs (Notify).
  int notify_fds[2];
  if (::pipe2(notify_fds, O_CLOEXEC) != 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  posix_spawn_file_actions_adddup2(&actions, notify_fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addclose(&actions, notify_fds[0]);
  posix_spawn_file_actions_addclose(&actions, notify_fds[1]);
  // serve blocks its stop signals in every thread (StopRequest) and ignores SIGPIPE: the child
  // starts with neither.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGTERM, SIGINT, SIGPIPE}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  // This very binary, under its own name (so that ps shows "dxshim device-plugin ...").
  char self[4096];
  const auto length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string binary = length > 0 ? std::string(self, static_cast<std::size_t>(length))
                                        : std::string("/proc/self/exe");
  std::vector<std::string> argv_strings = {binary};
  argv_strings.insert(argv_strings.end(), args_.begin(), args_.end());
  argv_strings.insert(argv_strings.end(), {"--parent-pid", std::to_string(::getpid())});
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, binary.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pipe_fds[1]);
  ::close(notify_fds[0]);
  if (error != 0) {
    ::close(pipe_fds[0]);
    ::close(notify_fds[1]);
    spdlog::error("device plugin: cannot start its process: {}", std::strerror(error));
    return -1;
  }
  // Notify() runs on the relay thread: it must never wait for the child.
  ::fcntl(notify_fds[1], F_SETFL, ::fcntl(notify_fds[1], F_GETFL) | O_NONBLOCK);
  notify_fd_ = notify_fds[1];  // Supervise holds mutex_ around Spawn
  log_fd = pipe_fds[0];
  return pid;
}

void PluginProcess::Notify() {
  std::lock_guard lock(mutex_);
  if (notify_fd_ < 0) return;
  // A full pipe already holds a notification the child has not read: this one adds nothing.
  // A child that is gone gives EPIPE (serve ignores SIGPIPE); its successor starts from the
  // runtime's record anyway.
  const char byte = 'k';
  [[maybe_unused]] const auto written = ::write(notify_fd_, &byte, 1);
}

void PluginProcess::RelayLog(int fd) {
  // The child writes "<level> <message>" lines (its pattern); they go on at that level.
  std::string buffer;
  char chunk[4096];
  for (;;) {
    const auto n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (auto end = buffer.find('\n'); end != std::string::npos; end = buffer.find('\n')) {
      const auto line = buffer.substr(0, end);
      buffer.erase(0, end + 1);
      const auto space = line.find(' ');
      const auto level = spdlog::level::from_str(line.substr(0, space));
      const bool known = space != std::string::npos && level != spdlog::level::off;
      spdlog::log(known ? level : spdlog::level::info, "{}", known ? line.substr(space + 1) : line);
    }
  }
  if (!buffer.empty()) spdlog::info("{}", buffer);
  ::close(fd);
}

void PluginProcess::Supervise() {
  auto pause = std::chrono::seconds(1);
  for (;;) {
    int log_fd = -1;
    const auto started = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      pid_ = Spawn(log_fd);
      exited_ = pid_ <= 0;
    }
    int status = 0;
    if (pid_ > 0) {
      RelayLog(log_fd);  // until the child closes stderr, i.e. exits
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    std::unique_lock lock(mutex_);
    exited_ = true;
    if (notify_fd_ >= 0) ::close(notify_fd_);
    notify_fd_ = -1;
    cv_.notify_all();
    if (stopping_) return;
    if (std::chrono::steady_clock::now() - started > std::chrono::minutes(1)) {
      pause = std::chrono::seconds(1);
    }
    spdlog::warn("device plugin: its process exited ({} {}); starting it again in {} s",
                 WIFSIGNALED(status) ? "signal" : "code",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), pause.count());
    cv_.wait_for(lock, pause, [this] { return stopping_; });
    pause = std::min(pause * 2, std::chrono::seconds(30));
  }
}

}  // namespace dxshim::device_plugin
