// Why tests/sanitizers/ubsan-fd-limit.supp exists, shown on clang's own runtime (UBSan builds
// only, no dxshim code): a process with no free file descriptor gets a false "invalid vptr"
// report for a valid object, and the suppression file silences exactly that. The test runs
// itself three times as a child (the runtime reads UBSAN_OPTIONS once, at start):
//   free descriptors, no suppression      -> exit 0 (the object is valid);
//   no descriptor free, no suppression    -> a UBSan report (the false one);
//   no descriptor free, the suppression   -> exit 0.
// Once clang's runtime no longer needs a descriptor to read an object, the second run exits 0,
// this test fails, and the suppression can go.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Base {
  virtual ~Base() = default;
  virtual int Value() const { return 1; }
};
struct Derived : Base {
  int Value() const override { return 2; }
};

// The child: optionally leaves itself no free descriptor, then makes one virtual call (the
// process's first vptr check, so it misses the runtime's type cache).
int Child(bool exhaust) {
  const Base* object = new Derived;
  rlimit original{};
  ::getrlimit(RLIMIT_NOFILE, &original);
  if (exhaust) {
    const int lowest = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ::close(lowest);
    rlimit limit = original;
    limit.rlim_cur = static_cast<rlim_t>(lowest);
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return 3;
  }
  const int value = object->Value();
  // LeakSanitizer's check at exit needs descriptors too (/proc/self/task).
  if (::setrlimit(RLIMIT_NOFILE, &original) != 0) return 3;
  delete object;
  return value == 2 ? 0 : 4;
}

struct ChildResult {
  int code = 0;        // the exit code, or 128 + the signal that ended it
  std::string errors;  // what it wrote to stderr
};

// Runs this program as a child with `options` as its whole UBSAN_OPTIONS.
ChildResult RunChild(const char* self, bool exhaust, const std::string& options) {
  int errors[2];
  if (::pipe(errors) != 0) return {126, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(errors[1], 2);
    ::close(errors[0]);
    ::close(errors[1]);
    ::setenv("UBSAN_OPTIONS", options.c_str(), 1);
    ::unsetenv("ASAN_OPTIONS");  // its log_path would take the child's report from stderr
    const char* mode = exhaust ? "exhaust" : "free";
    ::execl(self, self, "child", mode, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(errors[1]);
  ChildResult result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(errors[0], buffer, sizeof buffer)) > 0;) {
    result.errors.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(errors[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) {
    return Child(std::strcmp(argv[2], "exhaust") == 0);
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SUPPRESSIONS-FILE\n", argv[0]);
    return 2;
  }
  const std::string reports = "halt_on_error=1:print_stacktrace=0:symbolize=0";
  const std::string suppressed = reports + ":suppressions=" + argv[1];
  int failures = 0;
  // `reported`: whether the child must have failed on UBSan's invalid-vptr report.
  const auto expect = [&](const char* what, const ChildResult& result, bool reported) {
    const bool said = result.errors.find("object has invalid vptr") != std::string::npos;
    const bool ok = reported ? result.code != 0 && said : result.code == 0 && !said;
    std::printf("%s: %s (exit %d)\n", ok ? "ok" : "FAILED", what, result.code);
    if (!ok) {
      std::printf("its stderr:\n%s\n", result.errors.c_str());
      ++failures;
    }
  };
  expect("free descriptors, no suppression: no report", RunChild(argv[0], false, reports), false);
  expect("no descriptor free, no suppression: the false report", RunChild(argv[0], true, reports),
         true);
  expect("no descriptor free, ubsan-fd-limit.supp: no report", RunChild(argv[0], true, suppressed),
         false);
  return failures == 0 ? 0 : 1;
}
