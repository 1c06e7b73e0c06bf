#include "devices/windows/driver_store.h"

#include <windows.h>

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "devices/windows/wide_text.h"
#include "devices/windows_adapter.h"

// The D3DKMT thunks gdi32.dll exports. mingw has no d3dkmthk.h, so the few types used are
// declared here with the layout of the WDK's d3dkmthk.h / d3dukmdt.h.
extern "C" {
using D3dkmtHandle = UINT;
struct D3dkmtOpenAdapterFromLuid {
  LUID adapter_luid;
  D3dkmtHandle adapter;
};
struct D3dkmtCloseAdapter {
  D3dkmtHandle adapter;
};
struct D3dkmtQueryAdapterInfo {
  D3dkmtHandle adapter;
  UINT type;  // KMTQUERYADAPTERINFOTYPE
  void* private_data;
  UINT private_data_size;
};
struct D3dddiQueryRegistryInfo {
  UINT query_type;   // D3DDDI_QUERYREGISTRY_TYPE
  UINT query_flags;  // D3DDDI_QUERYREGISTRY_FLAGS
  WCHAR value_name[MAX_PATH];
  ULONG value_type;
  ULONG physical_adapter_index;
  ULONG output_value_size;  // bytes the output needs
  UINT status;              // D3DDDI_QUERYREGISTRY_STATUS
  union {
    DWORD output_dword;
    UINT64 output_qword;
    WCHAR output_string[1];
  };
};
LONG WINAPI D3DKMTOpenAdapterFromLuid(D3dkmtOpenAdapterFromLuid* args);
LONG WINAPI D3DKMTCloseAdapter(const D3dkmtCloseAdapter* args);
LONG WINAPI D3DKMTQueryAdapterInfo(const D3dkmtQueryAdapterInfo* args);
}

namespace dxshim::devices::windows {
namespace {

constexpr UINT kQueryRegistry = 48;        // KMTQAITYPE_QUERYREGISTRY (WDDM 2.4+)
constexpr UINT kDriverStorePath = 2;       // D3DDDI_QUERYREGISTRY_DRIVERSTOREPATH
constexpr UINT kStatusSuccess = 0;         // D3DDDI_QUERYREGISTRY_STATUS_SUCCESS
constexpr UINT kStatusBufferOverflow = 1;  // ..._BUFFER_OVERFLOW: output_value_size says
constexpr ULONG kMaxOutput = 64u * 1024u;  // a path; anything larger is not one
static_assert(offsetof(D3dddiQueryRegistryInfo, output_dword) == 544);

std::string Status(LONG status) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08lx", static_cast<unsigned long>(status));
  return buf;
}

std::string WindowsDirectory() {
  std::wstring dir(GetSystemWindowsDirectoryW(nullptr, 0), L'\0');  // size includes the NUL
  const UINT n = GetSystemWindowsDirectoryW(dir.data(), static_cast<UINT>(dir.size()));
  if (n == 0 || n >= dir.size()) throw std::runtime_error("GetSystemWindowsDirectory failed");
  try {
    return Narrow(dir.data(), n);
  } catch (const Utf16Error& e) {
    throw std::runtime_error(std::string("the Windows directory ") + e.what());
  }
}

class Adapter {
 public:
  explicit Adapter(std::uint64_t luid) {
    D3dkmtOpenAdapterFromLuid open{};
    open.adapter_luid.LowPart = static_cast<DWORD>(luid & 0xffffffffu);
    open.adapter_luid.HighPart = static_cast<LONG>(luid >> 32);
    const LONG status = D3DKMTOpenAdapterFromLuid(&open);
    if (status != 0) {
      throw std::runtime_error("D3DKMTOpenAdapterFromLuid failed: NTSTATUS " + Status(status));
    }
    handle_ = open.adapter;
  }
  ~Adapter() {
    const D3dkmtCloseAdapter close{handle_};
    D3DKMTCloseAdapter(&close);
  }
  Adapter(const Adapter&) = delete;
  Adapter& operator=(const Adapter&) = delete;
  D3dkmtHandle handle() const { return handle_; }

 private:
  D3dkmtHandle handle_ = 0;
};

}  // namespace

std::string QueryDriverStorePath(std::uint64_t luid) {
  const Adapter adapter(luid);
  ULONG output_size = MAX_PATH * sizeof(WCHAR);
  for (int attempt = 0; attempt < 3; ++attempt) {
    // The output string follows the fixed part; 8-byte units keep the buffer aligned.
    const std::size_t bytes = offsetof(D3dddiQueryRegistryInfo, output_string) + output_size;
    std::vector<UINT64> buffer((bytes + sizeof(UINT64) - 1) / sizeof(UINT64) + 1, 0);
    auto* info = reinterpret_cast<D3dddiQueryRegistryInfo*>(buffer.data());
    info->query_type = kDriverStorePath;
    const D3dkmtQueryAdapterInfo query{adapter.handle(), kQueryRegistry, info,
                                       static_cast<UINT>(buffer.size() * sizeof(UINT64))};
    const LONG status = D3DKMTQueryAdapterInfo(&query);
    if (status != 0) {
      throw std::runtime_error("D3DKMTQueryAdapterInfo(DRIVERSTOREPATH) failed: NTSTATUS " +
                               Status(status));
    }
    if (info->status == kStatusSuccess) {
      const std::size_t chars =
          std::min<std::size_t>(info->output_value_size, output_size) / sizeof(WCHAR);
      std::wstring path(info->output_string, chars);
      path.resize(std::wcslen(path.c_str()));
      std::string utf8;
      try {
        utf8 = Narrow(path.data(), path.size());
      } catch (const Utf16Error& e) {
        throw std::runtime_error(
            "D3DKMTQueryAdapterInfo(DRIVERSTOREPATH) reports a path that cannot be used: " +
            std::string(e.what()));
      }
      return ExpandSystemRoot(utf8, WindowsDirectory());
    }
    if (info->status != kStatusBufferOverflow || info->output_value_size <= output_size ||
        info->output_value_size > kMaxOutput) {
      throw std::runtime_error("D3DKMTQueryAdapterInfo(DRIVERSTOREPATH): status " +
                               std::to_string(info->status));
    }
    output_size = info->output_value_size;
  }
  throw std::runtime_error("D3DKMTQueryAdapterInfo(DRIVERSTOREPATH): the path kept growing");
}

}  // namespace dxshim::devices::windows
