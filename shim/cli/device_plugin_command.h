// `dxshim device-plugin`: kubelet's device plugin for dxshim's GPUs on its own, as `dxshim serve`
// starts it (a child process, see plugin_process.h) or as an operator may run it. It takes the
// serve keys that decide what it advertises (device source and filters, pods per GPU, resource
// name and kubelet's directory) and --config, so that it advertises what serve admits.
#pragma once

namespace dxshim {

int RunDevicePlugin(int argc, char** argv);

}  // namespace dxshim
