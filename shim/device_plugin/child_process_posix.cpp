// POSIX half of child_process.h.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "shim/device_plugin/child_process.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): unistd.h declares it only with
                        // _GNU_SOURCE

namespace dxshim::device_plugin {

struct ChildProcess::Handles {
  pid_t pid = -1;
  int log = -1;     // read end of its stderr
  int notify = -1;  // write end of its stdin
  std::atomic<bool> reaped{false};
};

ChildProcess::ChildProcess(const std::vector<std::string>& args)
    : handles_(std::make_unique<Handles>()) {
  int log_fds[2];
  // Close-on-exec: no other process this one starts inherits the pipes (dup2 onto the child's
  // stdin and stderr clears the flag there).
  if (::pipe2(log_fds, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
  int notify_fds[2];
  if (::pipe2(notify_fds, O_CLOEXEC) != 0) {
    ::close(log_fds[0]);
    ::close(log_fds[1]);
    throw std::runtime_error(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, log_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, notify_fds[0], STDIN_FILENO);
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
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int error =
      posix_spawn(&handles_->pid, binary.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(log_fds[1]);
  ::close(notify_fds[0]);
  if (error != 0) {
    ::close(log_fds[0]);
    ::close(notify_fds[1]);
    throw std::runtime_error(std::strerror(error));
  }
  // Notify() runs on the relay thread: it must never wait for the child.
  ::fcntl(notify_fds[1], F_SETFL, ::fcntl(notify_fds[1], F_GETFL) | O_NONBLOCK);
  handles_->notify = notify_fds[1];
  handles_->log = log_fds[0];
}

ChildProcess::~ChildProcess() {
  if (!handles_->reaped) {
    Kill();
    Wait();
  }
  CloseInput();
  if (handles_->log >= 0) ::close(handles_->log);
}

long ChildProcess::id() const { return handles_->pid; }

long ChildProcess::ReadLog(char* buffer, std::size_t size) {
  for (;;) {
    const auto n = ::read(handles_->log, buffer, size);
    if (n < 0 && errno == EINTR) continue;
    return n < 0 ? 0 : n;
  }
}

void ChildProcess::Notify() {
  if (handles_->notify < 0) return;
  // A child that is gone gives EPIPE (serve ignores SIGPIPE); its successor starts from the
  // runtime's record anyway.
  const char byte = 'k';
  [[maybe_unused]] const auto written = ::write(handles_->notify, &byte, 1);
}

void ChildProcess::CloseInput() {
  if (handles_->notify >= 0) ::close(handles_->notify);
  handles_->notify = -1;
}

void ChildProcess::Kill() {
  if (!handles_->reaped) ::kill(handles_->pid, SIGKILL);
}

std::string ChildProcess::Wait() {
  int status = 0;
  while (::waitpid(handles_->pid, &status, 0) < 0 && errno == EINTR) {
  }
  handles_->reaped = true;
  return WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                             : "code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace dxshim::device_plugin
