#include "shim/gpu/container_path.h"

#include "devices/runtime_files.h"
#include "shim/base/ascii_case.h"

namespace dxshim {
namespace {

bool IsWindowsSeparator(char c) { return c == '\\' || c == '/'; }

// The length of the volume name at the start of `path`: 2 for a drive letter, the `\\host\share`
// prefix of a UNC path, 0 otherwise.
std::size_t WindowsVolumeLength(std::string_view path) {
  if (path.size() >= 2 && path[1] == ':' &&
      ((path[0] >= 'a' && path[0] <= 'z') || (path[0] >= 'A' && path[0] <= 'Z'))) {
    return 2;
  }
  if (path.size() >= 3 && IsWindowsSeparator(path[0]) && IsWindowsSeparator(path[1]) &&
      !IsWindowsSeparator(path[2])) {
    // \\host\share: up to the separator after the share (or the end).
    std::size_t i = 2;
    while (i < path.size() && !IsWindowsSeparator(path[i])) ++i;
    if (i + 1 >= path.size() || IsWindowsSeparator(path[i + 1])) return 0;  // no share name
    ++i;
    while (i < path.size() && !IsWindowsSeparator(path[i])) ++i;
    return i;
  }
  return 0;
}

// Lexical clean of `rest` (no volume), Go's algorithm, written into one string: rooted paths
// drop `..` at the root, relative ones keep leading `..`.
std::string CleanElements(std::string_view rest, bool (*is_separator)(char), char separator) {
  const bool rooted = !rest.empty() && is_separator(rest.front());
  std::string out;
  out.reserve(rest.size() + 1);
  std::size_t floor = 0;  // `..` never backs up below this length
  if (rooted) {
    out += separator;
    floor = 1;
  }
  std::size_t i = 0;
  while (i < rest.size()) {
    if (is_separator(rest[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < rest.size() && !is_separator(rest[end])) ++end;
    const auto element = rest.substr(i, end - i);
    i = end;
    if (element == ".") continue;
    if (element == "..") {
      if (out.size() > floor) {
        std::size_t w = out.size() - 1;
        while (w > floor && out[w] != separator) --w;
        out.resize(w);
      } else if (!rooted) {
        if (!out.empty()) out += separator;
        out += "..";
        floor = out.size();
      }
      continue;
    }
    if (out.size() > (rooted ? 1u : 0u)) out += separator;
    out += element;
  }
  if (out.empty()) out = ".";
  return out;
}

bool IsPosixSeparator(char c) { return c == '/'; }

}  // namespace

std::string CleanWindowsPath(std::string_view path) {
  const auto volume_length = WindowsVolumeLength(path);
  std::string volume(path.substr(0, volume_length));
  for (auto& c : volume) c = c == '/' ? '\\' : c;
  const auto rest = path.substr(volume_length);
  if (rest.empty()) return volume_length > 2 ? volume : volume + ".";
  return volume + CleanElements(rest, IsWindowsSeparator, '\\');
}

std::string CleanPosixPath(std::string_view path) {
  return CleanElements(path, IsPosixSeparator, '/');
}

std::string WindowsMountDestination(std::string_view container_path, std::string_view host_path) {
  // A named pipe's mount is passed on untouched, and so is a whole drive ("D:").
  if (host_path.starts_with("\\\\.\\pipe\\") || container_path.empty() ||
      (container_path.size() == 2 && container_path[1] == ':')) {
    return std::string(container_path);
  }
  auto destination = CleanWindowsPath(container_path);
  if (destination.front() == '\\') destination.insert(0, "C:");
  return destination;
}

std::string MountDestinationKey(std::string_view container_path, std::string_view host_path,
                                bool windows) {
  if (!windows) return CleanPosixPath(container_path);
  return ToLowerAscii(WindowsMountDestination(container_path, host_path));
}

}  // namespace dxshim
