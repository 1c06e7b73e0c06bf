// --probe-pipe NAME: opens a named pipe as a client and names the process that serves it.
#include <windows.h>

#include <cstdio>
#include <string>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/pipe_endpoint.h"
#include "tests/support/node_standin/roles.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;

int ProbePipe(const std::wstring& name) {
  std::wstring pipe = name;
  if (const auto from_url = PipePathOfEndpoint(name)) {
    pipe = *from_url;
  } else if (name.rfind(L"\\\\", 0) == 0 || name.rfind(L"//", 0) == 0) {
    for (auto& c : pipe) c = c == L'/' ? L'\\' : c;
  } else {
    pipe = L"\\\\.\\pipe\\" + name;
  }
  const std::string text = Utf8FromWide(pipe.c_str());
  for (int attempt = 0; attempt < 2; ++attempt) {
    const HANDLE handle = CreateFileW(pipe.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr,
                                      OPEN_EXISTING, 0, nullptr);
    if (handle != INVALID_HANDLE_VALUE) {
      ULONG server = 0;
      const bool known = GetNamedPipeServerProcessId(handle, &server) != FALSE;
      CloseHandle(handle);
      if (known) {
        std::printf("%s: served by process %lu\n", text.c_str(), server);
      } else {
        std::printf("%s: served (by a process not known)\n", text.c_str());
      }
      return 0;
    }
    const DWORD error = GetLastError();
    if (error != ERROR_PIPE_BUSY || attempt > 0) {
      std::printf("%s: not served (error %lu)\n", text.c_str(), error);
      return 1;
    }
    WaitNamedPipeW(pipe.c_str(), 2000);  // every instance busy: wait for one once
  }
  return 1;
}

}  // namespace dxshim::test::node_standin
