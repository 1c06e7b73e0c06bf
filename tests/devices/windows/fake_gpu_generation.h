// The stand-in GPU driver's "generation", shared by the stand-in dxcore.dll, cfgmgr32.dll and
// nvcuda.dll (never by dxshim): a test bumps it to act out a driver update or a device restart,
// after which Windows gives each adapter a new LUID. Read from the Wine registry,
// HKLM\Software\dxshim-test\FakeGpu, DWORD Generation (0 when absent); each adapter's LUID low
// part grows by 0x100 per generation.
#pragma once

#include <windows.h>

namespace fake_gpu {

inline DWORD Generation() {
  DWORD value = 0;
  DWORD size = sizeof value;
  if (RegGetValueW(HKEY_LOCAL_MACHINE, L"Software\\dxshim-test\\FakeGpu", L"Generation",
                   RRF_RT_REG_DWORD, nullptr, &value, &size) != ERROR_SUCCESS) {
    return 0;
  }
  return value;
}

inline LUID Renumbered(LUID luid, DWORD generation) {
  luid.LowPart += generation * 0x100;
  return luid;
}

// One line per load of a stand-in driver library, "LIBRARY COMMAND-LINE", appended to
// C:\fake-gpu-loads.log: the test reads which processes loaded it.
inline void LogLoad(const char* library) {
  const HANDLE log =
      CreateFileA("C:\\fake-gpu-loads.log", FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE,
                  nullptr, OPEN_ALWAYS, 0, nullptr);
  if (log == INVALID_HANDLE_VALUE) return;
  const char* line = GetCommandLineA();
  DWORD written = 0;
  WriteFile(log, library, static_cast<DWORD>(lstrlenA(library)), &written, nullptr);
  WriteFile(log, " ", 1, &written, nullptr);
  WriteFile(log, line, static_cast<DWORD>(lstrlenA(line)), &written, nullptr);
  WriteFile(log, "\n", 1, &written, nullptr);
  CloseHandle(log);
}

}  // namespace fake_gpu
