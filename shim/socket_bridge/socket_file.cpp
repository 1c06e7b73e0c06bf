// The socket-file rules, the stand-in file and listening or connecting at a path: the same on
// every platform (IdentifyFile is file_identity_windows.cpp's or file_identity_posix.cpp's).
#include "shim/socket_bridge/socket_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace dxshim::socket_bridge {
namespace {

constexpr char kStandInTag[] = "dxshim-tcp-stand-in";

std::filesystem::path PathOf(const std::string& utf8) {
  return std::filesystem::path(std::u8string(utf8.begin(), utf8.end()));
}

}  // namespace

const char* ToString(SocketFamily family) {
  return family == SocketFamily::kUnix ? "AF_UNIX" : "loopback TCP stand-in";
}

std::string SocketPathProblem(const std::string& path) {
  if (path.size() > kMaxSocketPathBytes) {
    return "the socket path " + path + " has " + std::to_string(path.size()) +
           " bytes; an AF_UNIX path may have at most " + std::to_string(kMaxSocketPathBytes);
  }
  const auto folder = PathOf(path).parent_path();
  std::error_code ec;
  const auto status = std::filesystem::status(folder, ec);
  if (!std::filesystem::exists(status)) {
    return "the folder of socket " + path + " does not exist";
  }
  if (!std::filesystem::is_directory(status)) {
    return "the folder of socket " + path + " is not a folder";
  }
  return {};
}

Socket ListenOnSocketFile(const std::string& path, SocketFamily family, std::string& error) {
  if (auto problem = SocketPathProblem(path); !problem.empty()) {
    error = std::move(problem);
    return {};
  }
  std::error_code ec;
  const auto file = PathOf(path);
  if (std::filesystem::is_directory(std::filesystem::symlink_status(file, ec))) {
    error = "cannot listen on " + path + ": a folder has that name";
    return {};
  }
  // A stale socket of an earlier run: bind fails on any existing file (Windows' AF_UNIX too).
  std::filesystem::remove(file, ec);
  if (ec) {
    error =
        "cannot listen on " + path + ": the stale file there cannot be deleted: " + ec.message();
    return {};
  }
  if (family == SocketFamily::kUnix) return ListenUnix(path, error);
  std::uint16_t port = 0;
  auto listener = ListenLoopback(port, error);
  if (listener.valid() && !WriteTcpStandIn(path, port, error)) return {};
  return listener;
}

Socket ConnectToSocketFile(const std::string& path, SocketFamily family, std::string& error) {
  if (family == SocketFamily::kUnix) return ConnectUnix(path, error);
  const auto port = ReadTcpStandIn(path);
  if (!port) {
    error = "cannot connect to " + path + ": no TCP stand-in file there";
    return {};
  }
  return ConnectLoopback(*port, error);
}

bool WriteTcpStandIn(const std::string& path, std::uint16_t port, std::string& error) {
  // Written whole under another name, then renamed: a reader never sees half of it.
  const auto file = PathOf(path);
  auto partial = file;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << kStandInTag << " 127.0.0.1:" << port << "\n";
    if (!out.flush()) {
      error = "cannot write the stand-in file " + path;
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(partial, file, ec);
  if (ec) {
    error = "cannot write the stand-in file " + path + ": " + ec.message();
    return false;
  }
  return true;
}

std::optional<std::uint16_t> ReadTcpStandIn(const std::string& path) {
  std::ifstream in(PathOf(path), std::ios::binary);
  std::string tag, address;
  if (!(in >> tag >> address) || tag != kStandInTag || address.rfind("127.0.0.1:", 0) != 0) {
    return std::nullopt;
  }
  try {
    const auto port = std::stoul(address.substr(10));
    if (port == 0 || port > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(port);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace dxshim::socket_bridge
