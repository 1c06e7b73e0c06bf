#include "tests/support/loopback_impostor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/process.h"

namespace dxshim::test {

namespace {

// The socket inodes open in /proc/`pid`/fd ("socket:[12345]").
std::set<std::string> SocketInodes(int pid) {
  std::set<std::string> inodes;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const auto target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (!ec && target.starts_with("socket:[")) inodes.insert(target.substr(8, target.size() - 9));
  }
  return inodes;
}

}  // namespace

std::vector<int> ProcessTree(int pid) {
  std::map<int, int> parent_of;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    // "PID (comm) STATE PPID ...": comm may hold spaces and parentheses; the last ')' ends it.
    const auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    parent_of[std::stoi(name)] = ppid;
  }
  std::vector<int> tree = {pid};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [child, parent] : parent_of) {
      if (std::find(tree.begin(), tree.end(), parent) != tree.end() &&
          std::find(tree.begin(), tree.end(), child) == tree.end()) {
        tree.push_back(child);
        grew = true;
      }
    }
  }
  return tree;
}

std::vector<int> ProcessesWithEnvironment(const std::string& entry) {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    const auto name = proc.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream environ(proc.path() / "environ", std::ios::binary);
    for (std::string variable; std::getline(environ, variable, '\0');) {
      if (variable == entry) {
        pids.push_back(std::stoi(name));
        break;
      }
    }
  }
  return pids;
}

std::vector<std::uint16_t> ListeningTcpPorts(const std::vector<int>& pids) {
  std::set<std::string> inodes;
  for (const int p : pids) inodes.merge(SocketInodes(p));
  std::set<std::uint16_t> ports;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream table(path);
    std::string line;
    std::getline(table, line);  // the header
    while (std::getline(table, line)) {
      // sl local remote st tx:rx tr:when retrnsmt uid timeout inode; state 0A is LISTEN.
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      if (state == "0A" && inodes.contains(inode)) {
        ports.insert(static_cast<std::uint16_t>(
            std::stoul(local.substr(local.rfind(':') + 1), nullptr, 16)));
      }
    }
  }
  return {ports.begin(), ports.end()};
}

Http2Impostor SendHttp2AsNobody(std::uint16_t port, const std::string& work_dir,
                                const std::string& method) {
  static int runs = 0;
  const auto log = work_dir + "/impostor-" + std::to_string(++runs) + ".log";
  // The script's text as an argument (python3 -c): `nobody` may not read the checkout (a clone
  // under /root) or the test's folder (mode 0700).
  std::ifstream file(std::string(DXSHIM_SOURCE_DIR) + "/tests/support/http2_impostor.py");
  const std::string script((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
  Process impostor({"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    // Debian's own: a python3 first on root's PATH may not be nobody's to run.
                    "/usr/bin/python3", "-c", script, std::to_string(port), method},
                   log);
  Http2Impostor result;
  const auto code = impostor.Wait(std::chrono::seconds(30));
  result.output = impostor.Log();
  EXPECT_EQ(code, std::optional<int>(0)) << result.output;
  const auto field = [&](const std::string& name) {
    const auto at = result.output.find("\"" + name + "\": ");
    if (at == std::string::npos) return std::string();
    const auto start = at + name.size() + 4;
    return result.output.substr(start, result.output.find_first_of(",}", start) - start);
  };
  const auto received = field("received");
  result.received = received.empty() ? 0 : std::stoul(received);
  result.ended = field("ended");
  if (result.ended.size() >= 2) result.ended = result.ended.substr(1, result.ended.size() - 2);
  result.http2_settings = field("http2_settings") == "true";
  return result;
}

}  // namespace dxshim::test
