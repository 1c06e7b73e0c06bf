#include "tests/support/read_file.h"

#include <fstream>
#include <sstream>

namespace dxshim::test {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace dxshim::test
