// A fresh directory under /tmp, removed with its contents on destruction. Short paths, so that
// unix socket paths inside stay under the 107-byte limit.
#pragma once

#include <string>

namespace dxshim::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace dxshim::test
