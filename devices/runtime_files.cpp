#include "devices/runtime_files.h"

#include <stdexcept>

#include "shim/base/ascii_case.h"

namespace dxshim::devices {
namespace {

bool IsControl(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

}  // namespace

std::optional<std::string> UnsafeSourceReason(std::string_view source) {
  if (source.empty()) return "is empty";
  for (char c : source) {
    if (IsControl(c)) return "contains a control character";
  }
  if (source.front() == '\\' || source.front() == '/') return "is absolute (starts with a root)";
  if (source.size() >= 2 && source[1] == ':') return "has a drive letter";
  if (source.find(':') != std::string_view::npos) return "contains ':' (a drive or stream name)";
  // Each component between separators: no "..", and no component that Windows trims to "..".
  std::size_t start = 0;
  while (start <= source.size()) {
    const auto end = source.find_first_of("\\/", start);
    const auto part =
        source.substr(start, end == std::string_view::npos ? source.npos : end - start);
    std::string_view trimmed = part;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '.')) {
      trimmed.remove_suffix(1);
    }
    if (part == ".." || (trimmed.empty() && part.size() >= 2)) return "contains '..'";
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> UnsafeDestinationReason(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name == "." || name == "..") return "is not a file name";
  for (char c : name) {
    if (IsControl(c)) return "contains a control character";
    if (std::string_view("\\/:*?\"<>|").find(c) != std::string_view::npos) {
      return std::string("contains '") + c + "'";
    }
  }
  return std::nullopt;
}

std::vector<std::string> SplitMultiSz(std::string_view data) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < data.size()) {
    const auto end = data.find('\0', start);
    const auto s = data.substr(start, end == std::string_view::npos ? data.npos : end - start);
    if (s.empty()) break;  // the empty string that ends the list
    out.emplace_back(s);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

RuntimeFile ParseCopyToVmValue(const std::vector<std::string>& strings) {
  if (strings.empty() || strings.size() > 2) {
    throw std::invalid_argument("expected 1 or 2 strings (source[, destination]), got " +
                                std::to_string(strings.size()));
  }
  RuntimeFile file{strings[0], strings.size() == 2 ? strings[1] : std::string()};
  if (auto why = UnsafeSourceReason(file.source)) {
    throw std::invalid_argument("source '" + file.source + "' " + *why);
  }
  if (file.destination.empty()) {
    const auto slash = file.source.find_last_of("\\/");
    file.destination = slash == std::string::npos ? file.source : file.source.substr(slash + 1);
  }
  if (auto why = UnsafeDestinationReason(file.destination)) {
    throw std::invalid_argument("destination '" + file.destination + "' " + *why);
  }
  return file;
}

void MergeRuntimeFiles(std::vector<RuntimeFile>& files, const std::vector<RuntimeFile>& extra) {
  for (const auto& candidate : extra) {
    bool taken = false;
    for (const auto& existing : files) {
      taken = taken || EqualsIgnoreCase(existing.destination, candidate.destination);
    }
    if (!taken) files.push_back(candidate);
  }
}

const std::map<std::string, std::string>& RequirableApis() {
  static const std::map<std::string, std::string> apis = {
      {"cuda", "nvcuda.dll"},         {"nvml", "nvml.dll"},
      {"nvenc", "nvEncodeAPI64.dll"}, {"nvdec", "nvcuvid.dll"},
      {"opencl", "OpenCL.dll"},       {"vulkan", "vulkan-1.dll"},
      {"amf", "amfrt64.dll"},         {"quicksync", "libmfxhw64.dll"},
  };
  return apis;
}

}  // namespace dxshim::devices
