// Running a stand-in's work as a service of the service control manager or in the foreground.
#pragma once

#include <windows.h>

#include <functional>
#include <string>

namespace dxshim::test::node_standin {

// A stand-in's work: runs until g_stop is set (or it ends by itself), calls ready() once it
// serves, returns its exit code. SERVICE_NAME is the name the SCM started it as ("" in the
// foreground).
using Work =
    std::function<DWORD(const std::wstring& service_name, const std::function<void()>& ready)>;

extern HANDLE g_stop;  // manual-reset: the SCM's STOP or SHUTDOWN, or a console's Ctrl-C

// Runs WORK as a SERVICE_WIN32_OWN_PROCESS service when the service control manager started this
// process, else (unless SERVICE_ONLY: exit code 2) in the foreground until Ctrl-C; ROLE names the
// stand-in in its messages. Returns the process's exit code.
int Run(const char* role, const Work& work, bool service_only);

}  // namespace dxshim::test::node_standin
