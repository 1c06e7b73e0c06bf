#include "shim/proxy/pipe_name.h"

#include <stdexcept>

namespace dxshim {
namespace {

constexpr std::string_view kPipePrefix = "\\\\.\\pipe\\";

[[noreturn]] void Reject(std::string_view text, std::string_view why) {
  throw std::invalid_argument("endpoint '" + std::string(text) + "': " + std::string(why));
}

}  // namespace

std::string PipePathFromEndpoint(std::string_view text) {
  if (!text.starts_with(kPipeScheme)) Reject(text, "expected npipe://./pipe/<name>");
  auto rest = text.substr(kPipeScheme.size());
  // npipe:////./pipe/x has an empty host and the path //./pipe/x; npipe://./pipe/x has host ".".
  if (rest.starts_with("//")) rest.remove_prefix(2);
  if (!rest.starts_with("./pipe/")) {
    Reject(text, "only local pipes are supported: npipe://./pipe/<name>");
  }
  const auto name = rest.substr(7);
  if (name.empty()) Reject(text, "the pipe name is empty");
  // The whole path (\\.\pipe\ + name) may have 256 characters.
  if (name.size() > 256 - 9) Reject(text, "the pipe name is too long");
  for (const char c : name) {
    if (c == '\\' || c == '/') Reject(text, "the pipe name contains a path separator");
    if (static_cast<unsigned char>(c) < 0x20)
      Reject(text, "the pipe name contains a control character");
  }
  return std::string(kPipePrefix) + std::string(name);
}

std::string PipeEndpointFromPath(std::string_view path) {
  if (path.starts_with(kPipePrefix)) path.remove_prefix(kPipePrefix.size());
  return std::string(kPipeScheme) + "./pipe/" + std::string(path);
}

}  // namespace dxshim
