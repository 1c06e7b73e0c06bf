// Serving a named pipe: always one instance listening, each client handed with its process id to
// a handler on a thread of its own, until g_stop.
#pragma once

#include <windows.h>

#include <functional>
#include <string>

namespace dxshim::test::node_standin {

// Whether another process serves PIPE: an instance waits for a client, or all are busy. (Wine does
// not enforce FILE_FLAG_FIRST_PIPE_INSTANCE, so this is asked first.)
bool PipeServed(const std::wstring& pipe);

// A new overlapped instance of PIPE (FIRST: the first, FILE_FLAG_FIRST_PIPE_INSTANCE).
HANDLE CreatePipeInstance(const std::wstring& pipe, bool first);

// HANDLER gets a connected instance (its own to close) and the client's process id (0 unknown).
using PipeClientHandler = std::function<void(HANDLE pipe, ULONG client_pid)>;

// Accepts clients of PIPE on LISTENING (the first instance) until g_stop; the next instance is
// made before a client is handed over, so that one always listens. Each handler runs on a
// detached thread, which g_stop ends through PipeStream's waits.
void ServePipe(const std::wstring& pipe, HANDLE listening, const PipeClientHandler& handler);

}  // namespace dxshim::test::node_standin
