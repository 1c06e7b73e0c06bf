// The socket-file rules of shim/socket_bridge/socket_file.h, as one program built twice: natively
// (Linux, where AF_UNIX exists) and with mingw, run under wine (Windows' paths and file calls;
// wine 8.0's Winsock has no AF_UNIX, so there the AF_UNIX bind itself is expected to fail and the
// stand-in family shows the rest). Checks: the 107-byte limit, the folder missing or not a
// folder, a stale file at the path deleted before bind, and file identities telling a replaced
// file from the same one. Prints "ok:"/"FAILED:" lines; exit 0 when all pass.
#include "shim/socket_bridge/socket_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using namespace dxshim::socket_bridge;
namespace fs = std::filesystem;

int failures = 0;

void Check(bool ok, const std::string& what, const std::string& detail = {}) {
  std::printf("%s: %s%s%s\n", ok ? "ok" : "FAILED", what.c_str(), detail.empty() ? "" : " -- ",
              detail.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

int main() {
  NetworkSession network;
  // Linux and a real Windows have AF_UNIX (deploy/windows/CHECKLIST.md); wine 8.0 has none.
  const bool af_unix_here = !RunningUnderWine();
  const fs::path root =
      fs::temp_directory_path() / ("dxshim-socket-rules-" + std::to_string(ThisProcess()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string dir = root.string();
  const char sep = static_cast<char>(fs::path::preferred_separator);

  // Length: at most 107 bytes (108 with the NUL an AF_UNIX address holds).
  const auto path_of_length = [&](std::size_t bytes) {
    std::string path = dir + sep;
    path += std::string(bytes - path.size() - 5, 'p') + ".sock";
    return path;
  };
  const auto longest = path_of_length(kMaxSocketPathBytes);
  const auto too_long = path_of_length(kMaxSocketPathBytes + 1);
  Check(SocketPathProblem(longest).empty(), "a 107-byte path is allowed",
        SocketPathProblem(longest));
  const auto problem = SocketPathProblem(too_long);
  Check(Contains(problem, "108 bytes") && Contains(problem, "at most 107"),
        "a 108-byte path is refused, saying both lengths", problem);
  std::string error;
  Check(!ListenOnSocketFile(too_long, SocketFamily::kTcpStandIn, error).valid() &&
            Contains(error, "108 bytes") && !fs::exists(too_long),
        "and nothing is made for it", error);

  // The folder.
  const auto missing = dir + sep + "no-such-folder" + sep + "x.sock";
  Check(Contains(SocketPathProblem(missing), "does not exist"), "a missing folder is named",
        SocketPathProblem(missing));
  error.clear();
  Check(!ListenOnSocketFile(missing, SocketFamily::kUnix, error).valid() &&
            Contains(error, "does not exist") && Contains(error, missing),
        "listening there fails naming the path", error);
  { std::ofstream(dir + sep + "plain-file") << "x"; }
  const auto under_file = dir + sep + "plain-file" + sep + "x.sock";
  Check(Contains(SocketPathProblem(under_file), "is not a folder"), "a file as the folder is named",
        SocketPathProblem(under_file));
  fs::create_directory(dir + sep + "taken.sock");
  error.clear();
  Check(!ListenOnSocketFile(dir + sep + "taken.sock", SocketFamily::kUnix, error).valid() &&
            Contains(error, "a folder has that name") && fs::is_directory(dir + sep + "taken.sock"),
        "a folder at the path is left alone and named", error);

  // A stale file (an earlier run's socket) is deleted before bind.
  const auto path = dir + sep + "plugin-1.sock";
  { std::ofstream(path) << "left by an earlier run"; }
  error.clear();
  auto listener = ListenOnSocketFile(path, SocketFamily::kUnix, error);
  if (af_unix_here) {
    Check(listener.valid(), "AF_UNIX: listening over a stale file works", error);
    error.clear();
    Check(ConnectToSocketFile(path, SocketFamily::kUnix, error).valid(),
          "AF_UNIX: and a client connects", error);
  } else {
    Check(!listener.valid() && Contains(error, "cannot listen on " + path) && !fs::exists(path),
          "AF_UNIX under wine: the stale file was deleted, then bind failed naming why", error);
  }
  listener.reset();
  { std::ofstream(path) << "left by an earlier run"; }
  error.clear();
  listener = ListenOnSocketFile(path, SocketFamily::kTcpStandIn, error);
  const auto port = ReadTcpStandIn(path);
  Check(listener.valid() && port.has_value() && *port == LocalPort(listener.get()),
        "stand-in: the stale file is replaced by one naming the listener's port", error);
  error.clear();
  auto client = ConnectToSocketFile(path, SocketFamily::kTcpStandIn, error);
  Check(client.valid(), "stand-in: a client connects through the file", error);

  // Identities: the same file twice is the same; a new file at the path is not (the old one is
  // kept under another name meanwhile, so that its inode or file index cannot be reused).
  const auto before = IdentifyFile(path);
  Check(before.exists && before == IdentifyFile(path), "a file's identity is stable");
  fs::rename(path, path + ".old");
  { std::ofstream(path) << "a new kubelet"; }
  const auto after = IdentifyFile(path);
  Check(after.exists && !(after == before) && IdentifyFile(path + ".old") == before,
        "a replaced file has another identity, and the identity follows the file");
  fs::remove(path);
  Check(!IdentifyFile(path).exists, "a deleted file has none");
  error.clear();
  Check(
      !ConnectToSocketFile(path, SocketFamily::kTcpStandIn, error).valid() && Contains(error, path),
      "connecting to a deleted socket file fails naming it", error);

  client.reset();
  listener.reset();
  fs::remove_all(root);
  std::printf(failures ? "%d FAILED\n" : "all passed\n", failures);
  return failures ? 1 : 0;
}
