// The containerd stand-in's containers and their tasks, and the text file under containerd's root
// that keeps them across its restarts (real containerd keeps them in its metadata database under
// root, and its shims keep running).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dxshim::test::node_standin {

struct ContainerRecord {
  std::string ns;  // containerd namespace
  std::string id;
  std::string image;
  std::string runtime;  // io.containerd.runhcs.v1
  // The task: "" (none), "created", "running" or "stopped" (containerd's task states).
  std::string task;
  std::uint32_t pid = 0;          // the task's process
  std::uint32_t exit_status = 0;  // once stopped
  std::uint32_t shim_pid = 0;
  std::string shim_address;  // the shim's TTRPC pipe
};

// One line per container, its fields separated by tabs, tabs, newlines and backslashes in them
// escaped; a first line names the format.
std::string SerializeContainers(const std::vector<ContainerRecord>& containers);
// The containers of TEXT (SerializeContainers' format); lines of any other shape are skipped.
std::vector<ContainerRecord> ParseContainers(const std::string& text);

}  // namespace dxshim::test::node_standin
