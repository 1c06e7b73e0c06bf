#include "tests/support/process_stats.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

namespace dxshim::test {
namespace {

std::filesystem::path FdDir(pid_t pid) {
  return std::filesystem::path("/proc") / std::to_string(pid) / "fd";
}

}  // namespace

double CpuSeconds(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces: the fields counted start after its ')'. utime
  // and stime are fields 14 and 15, the 12th and 13th after it.
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string skipped;
  for (int i = 0; i < 11; ++i) fields >> skipped;
  unsigned long long user = 0;
  unsigned long long system = 0;
  fields >> user >> system;
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::size_t OpenFds(pid_t pid) {
  std::size_t n = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(FdDir(pid), ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return n;
}

int LowestFreeFd(pid_t pid) {
  std::set<int> open;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(FdDir(pid), ec), end; !ec && it != end;
       it.increment(ec)) {
    open.insert(std::stoi(it->path().filename().string()));
  }
  int lowest = 0;
  while (open.contains(lowest)) ++lowest;
  return lowest;
}

}  // namespace dxshim::test
