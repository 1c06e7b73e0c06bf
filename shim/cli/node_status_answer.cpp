#include "shim/cli/node_status_answer.h"

#include "dxshim/v1/node_status.pb.h"
#include "shim/socket_bridge/socket_api.h"

namespace dxshim {

LocalMethods NodeStatusMethods(const CriCallers& callers) {
  LocalMethods methods;
  methods[kCriCallersMethod] = [&callers] {
    v1::CriCallersResponse response;
    response.set_server_pid(static_cast<std::uint32_t>(socket_bridge::ThisProcess()));
    for (const auto& record : callers.Snapshot()) {
      auto* caller = response.add_callers();
      caller->set_pid(record.client.pid);
      caller->set_program(record.client.program);
      caller->set_calls(record.calls);
      caller->set_first_call_unix_ms(record.first_call_unix_ms);
      caller->set_last_call_unix_ms(record.last_call_unix_ms);
    }
    return response.SerializeAsString();
  };
  return methods;
}

}  // namespace dxshim
