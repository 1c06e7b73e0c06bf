#include "devices/windows/registry_runtime_files.h"

#include <windows.h>

#include <stdexcept>

#include "devices/runtime_files.h"
#include "devices/windows/wide_text.h"

namespace dxshim::devices::windows {
namespace {

constexpr wchar_t kClassRoot[] = L"SYSTEM\\CurrentControlSet\\Control\\Class\\";

class Key {
 public:
  Key(HKEY parent, const std::wstring& path) {
    if (RegOpenKeyExW(parent, path.c_str(), 0, KEY_READ, &key_) != ERROR_SUCCESS) key_ = nullptr;
  }
  ~Key() {
    if (key_ != nullptr) RegCloseKey(key_);
  }
  Key(const Key&) = delete;
  Key& operator=(const Key&) = delete;
  HKEY get() const { return key_; }

 private:
  HKEY key_ = nullptr;
};

// Reads every value of `subkey` into `files`, refusing (with a reason) what is not a valid entry.
void ReadSubkey(HKEY driver, const wchar_t* subkey, const std::string& subkey_name,
                std::vector<RuntimeFile>& files, std::vector<std::string>& refused) {
  Key key(driver, subkey);
  if (key.get() == nullptr) return;
  DWORD max_name = 0, max_data = 0;
  if (RegQueryInfoKeyW(key.get(), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                       &max_name, &max_data, nullptr, nullptr) != ERROR_SUCCESS) {
    refused.push_back(subkey_name + ": cannot query the key");
    return;
  }
  std::vector<RuntimeFile> found;
  for (DWORD index = 0;; ++index) {
    // Sizes come from the key itself; a value may grow between the query and the read, so the
    // read is retried with the size Windows reports.
    std::wstring name(max_name + 1, L'\0');
    std::vector<wchar_t> data(max_data / sizeof(wchar_t) + 2, L'\0');
    LONG status = ERROR_MORE_DATA;
    DWORD type = 0, name_len = 0, data_len = 0;
    while (status == ERROR_MORE_DATA) {
      name_len = static_cast<DWORD>(name.size());
      data_len = static_cast<DWORD>((data.size() - 2) * sizeof(wchar_t));
      status = RegEnumValueW(key.get(), index, name.data(), &name_len, nullptr, &type,
                             reinterpret_cast<BYTE*>(data.data()), &data_len);
      if (status == ERROR_MORE_DATA) {
        name.resize(name.size() * 2 + 256);
        data.resize(data.size() * 2 + 256);
      }
    }
    if (status == ERROR_NO_MORE_ITEMS) break;
    // The value's name is only shown; its data is used, so it must convert exactly.
    const std::string value =
        subkey_name + "\\" + Narrow(name.c_str(), name_len, Surrogates::kShow);
    if (status != ERROR_SUCCESS) {
      refused.push_back(value + ": cannot be read (error " + std::to_string(status) + ")");
      continue;
    }
    if (type != REG_MULTI_SZ) {
      refused.push_back(value + ": not REG_MULTI_SZ (type " + std::to_string(type) + ")");
      continue;
    }
    try {
      const auto strings = Utf8FromMultiSz(data.data(), data_len / sizeof(wchar_t));
      found.push_back(ParseCopyToVmValue(strings));
    } catch (const Utf16Error& e) {
      refused.push_back(value + ": " + e.what());
    } catch (const std::invalid_argument& e) {
      refused.push_back(value + ": " + e.what());
    }
  }
  MergeRuntimeFiles(files, found);
}

}  // namespace

RegistryRuntimeFiles ReadRegistryRuntimeFiles(const std::string& driver_key) {
  if (auto why = UnsafeSourceReason(driver_key)) {
    throw std::runtime_error("driver key '" + driver_key + "' " + *why);
  }
  Key driver(HKEY_LOCAL_MACHINE, kClassRoot + Widen(driver_key));
  if (driver.get() == nullptr) {
    throw std::runtime_error(
        "cannot open driver key HKLM\\SYSTEM\\CurrentControlSet\\Control\\Class\\" + driver_key);
  }
  RegistryRuntimeFiles out;
  ReadSubkey(driver.get(), L"CopyToVmOverwrite", "CopyToVmOverwrite", out.system32, out.refused);
  ReadSubkey(driver.get(), L"CopyToVmWhenNewer", "CopyToVmWhenNewer", out.system32, out.refused);
  ReadSubkey(driver.get(), L"CopyToVmOverwriteWow64", "CopyToVmOverwriteWow64", out.syswow64,
             out.refused);
  ReadSubkey(driver.get(), L"CopyToVmWhenNewerWow64", "CopyToVmWhenNewerWow64", out.syswow64,
             out.refused);
  return out;
}

}  // namespace dxshim::devices::windows
