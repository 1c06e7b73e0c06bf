// What the containerd stand-in does with the calls it serves: every gRPC call logged in calls.log
// and answered OK with an empty message, except the containerd API calls ctr.exe makes, which act
// on its container table (kept under its root, reloaded at start); tasks run under
// containerd-shim-runhcs-v1.exe stand-ins it starts and calls over TTRPC; events the shims
// forward over TTRPC logged in events.log, a /tasks/exit marking its task stopped.
#pragma once

#include <windows.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/node_standin/container_table.h"
#include "tests/support/node_standin/grpc_call.h"
#include "tests/support/node_standin/ttrpc.h"

namespace dxshim::test::node_standin {

class ContainerdService {
 public:
  // FOLDER: containerd.exe's (calls.log, events.log, the shim binary). ROOT: containerd's root
  // folder. GRPC_ADDRESS and TTRPC_ADDRESS: as containerd hands them to shims (-address and
  // TTRPC_ADDRESS).
  ContainerdService(std::wstring folder, std::wstring root, std::string grpc_address,
                    std::string ttrpc_address);

  // The container table as the last run left it.
  void Load();
  GrpcResponse Call(const GrpcRequest& request, ULONG client_pid);
  TtrpcStatus Event(const TtrpcRequest& request, std::string& payload);

 private:
  GrpcResponse ContainersCall(const std::string& method, const std::string& ns,
                              const std::string& message);
  GrpcResponse TasksCall(const std::string& method, const std::string& ns,
                         const std::string& message);
  GrpcResponse CreateTask(const std::string& ns, const std::string& id);
  // The record of NS/ID, or nullptr; called with mutex_ held.
  ContainerRecord* Find(const std::string& ns, const std::string& id);
  void Save();  // with mutex_ held
  // Starts the shim of NS/ID as containerd does: its address, or nothing with WHY.
  std::optional<std::string> StartShim(const std::string& ns, const std::string& id,
                                       DWORD& shim_pid, std::string& why);

  std::wstring folder_;
  std::wstring root_;
  std::string grpc_address_;
  std::string ttrpc_address_;
  std::mutex mutex_;
  std::vector<ContainerRecord> containers_;
};

// One unary call to a shim's task service (shim.proto's containerd.task.v2.Task) at ADDRESS,
// dialed for the call: false with WHY when the shim cannot be reached.
bool CallShim(const std::string& address, const std::string& ns, const std::string& method,
              const std::string& request, TtrpcStatus& status, std::string& response,
              std::string& why);

}  // namespace dxshim::test::node_standin
