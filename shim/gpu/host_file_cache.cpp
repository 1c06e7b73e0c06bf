#include "shim/gpu/host_file_cache.h"

#include <filesystem>

namespace dxshim {

bool HostFileCache::Exists(const std::string& path) {
  const auto generation = snapshot_.generation();
  std::lock_guard lock(mutex_);
  if (generation != generation_) {
    known_.clear();
    generation_ = generation;
  }
  const auto it = known_.find(path);
  if (it != known_.end()) return it->second;
  std::error_code ec;
  const bool exists = std::filesystem::is_regular_file(path, ec);
  known_.emplace(path, exists);
  return exists;
}

}  // namespace dxshim
