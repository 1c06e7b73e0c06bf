// Linux: kubelets are the processes named kubelet in /proc that run as root, by their effective
// uid (a process anybody can start under that name is not believed), each read from its own command
// line and the config files it names, as that process sees them (through /proc/PID/root and
// /proc/PID/cwd, so a kubelet in a container is read right too). Only regular files of at most 1
// MiB are read: a name that leads to a FIFO or a device never blocks doctor.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "shim/doctor/kubelet_check.h"
#include "shim/install/kubelet/kubelet_endpoint.h"
#include "shim/install/system/node_system.h"

namespace dxshim::doctor {
namespace {

constexpr off_t kMaxConfigBytes = 1 << 20;

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

// A config file of a kubelet (`path` already through its /proc/PID/root or cwd).
std::optional<std::string> ReadConfig(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw install::NodeError(path + " cannot be read: " + std::strerror(errno));
  }
  struct stat st {};
  std::string text;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxConfigBytes;
  bool read_error = false;
  if (regular) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) read_error = true;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    text.resize(done);
  }
  close(fd);
  if (!regular) throw install::NodeError(path + " is not a regular file of at most 1 MiB");
  if (read_error) throw install::NodeError(path + " cannot be read");
  return text;
}

// Whether the process runs as root: its effective uid, from the Uid: line of its status (the
// owner of /proc/PID is root for any process that made itself non-dumpable).
bool RunsAsRoot(const std::filesystem::path& status) {
  std::ifstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("Uid:")) continue;
    std::istringstream fields(line.substr(4));
    std::string real;
    std::string effective;
    fields >> real >> effective;
    return effective == "0";
  }
  return false;
}

}  // namespace

KubeletSearch FindKubelets() {
  KubeletSearch search;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto pid = it->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto comm = Slurp(it->path() / "comm");
    if (!comm || Trimmed(*comm) != "kubelet") continue;
    if (!RunsAsRoot(it->path() / "status")) continue;
    const auto cmdline = Slurp(it->path() / "cmdline");
    if (!cmdline || cmdline->empty()) continue;  // it ended meanwhile, or is a zombie
    std::vector<std::string> args;
    std::istringstream in(*cmdline);
    for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
    const std::string proc = it->path().string();
    install::KubeletFiles files;
    files.read = ReadConfig;
    files.list = [](const std::string& folder) {
      std::vector<std::string> names;
      std::error_code list_error;
      for (std::filesystem::directory_iterator f(folder, list_error), last;
           !list_error && f != last; f.increment(list_error)) {
        if (f->is_regular_file(list_error)) names.push_back(f->path().filename().string());
      }
      std::sort(names.begin(), names.end());
      return names;
    };
    // As the kubelet sees it: its root for an absolute path, its working folder for a relative.
    files.resolve = [proc](const std::string& path) {
      return proc + (path.starts_with('/') ? "/root" + path : "/cwd/" + path);
    };
    const std::string who = "kubelet (pid " + pid + ")";
    try {
      const auto setting = install::KubeletEndpoint(install::WordsOf(args), files);
      std::string where(install::SettingPlaceName(setting.place));
      if (setting.place == install::SettingPlace::kServiceCommandLine) {
        where = "its --container-runtime-endpoint";
      } else if (!setting.path.empty()) {
        // The file as the kubelet names it, not through /proc.
        const auto root = proc + "/root";
        where += " " +
                 (setting.path.starts_with(root) ? setting.path.substr(root.size()) : setting.path);
      }
      search.seen.push_back({who, setting.value, where});
    } catch (const std::exception& e) {
      search.problems.push_back(who + ": " + e.what());
    }
  }
  return search;
}

}  // namespace dxshim::doctor
