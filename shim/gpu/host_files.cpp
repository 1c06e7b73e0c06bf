#include "shim/gpu/host_files.h"

#include <filesystem>

namespace dxshim {
namespace {

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

void HostFiles::Observe(const std::vector<devices::Device>& devices) {
  std::vector<std::string> present;
  for (const auto& d : devices) {
    for (const auto* files : {&d.system32, &d.syswow64}) {
      for (const auto& f : *files) {
        auto path = RuntimeFileHostPath(d, f, target_);
        if (IsFile(path)) present.push_back(std::move(path));
      }
    }
  }
  std::lock_guard lock(mutex_);
  seen_.insert(present.begin(), present.end());
}

HostFileState HostFiles::Check(const std::string& path) {
  const bool present = IsFile(path);  // outside the lock: stats of concurrent callers overlap
  std::lock_guard lock(mutex_);
  if (present) {
    seen_.insert(path);
    return HostFileState::kPresent;
  }
  return seen_.contains(path) ? HostFileState::kGone : HostFileState::kAbsent;
}

}  // namespace dxshim
