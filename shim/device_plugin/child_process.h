// One child process running this same program, with two pipes: its stdin, on which the parent
// writes a byte per notification and whose end asks it to stop, and its stderr, which the parent
// reads as the child's log. The platform layer under PluginProcess:
//   POSIX    posix_spawn; the child asks the kernel for SIGTERM when its parent dies
//            (PR_SET_PDEATHSIG, in `dxshim device-plugin`);
//   Windows  CreateProcess, suspended until it is in a job object of its own whose last handle,
//            held only here, kills it when closed (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): however
//            this process ends, a crash or TerminateProcess included, the child ends with it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace dxshim::device_plugin {

class ChildProcess {
 public:
  // Starts `<this program> args...`. Throws std::runtime_error naming what failed.
  explicit ChildProcess(const std::vector<std::string>& args);
  ~ChildProcess();  // kills it if it still runs, and reaps it
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  long id() const;
  // Blocks for the next bytes of its log; 0 once every writer closed its end (it exited).
  long ReadLog(char* buffer, std::size_t size);
  // One byte on its stdin without waiting (a full pipe already holds one it has not read).
  void Notify();
  // Closes its stdin: `dxshim device-plugin` stops when it reads the end.
  void CloseInput();
  void Kill();
  // Waits until it exited; says how ("code 0", "signal 9").
  std::string Wait();

 private:
  struct Handles;
  std::unique_ptr<Handles> handles_;
};

}  // namespace dxshim::device_plugin
