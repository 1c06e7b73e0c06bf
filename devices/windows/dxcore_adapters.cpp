#include "devices/windows/dxcore_adapters.h"

#include <map>
#include <stdexcept>
#include <string>

#include "devices/windows/dxcore_api.h"
#include "shim/base/utf8_text.h"

namespace dxshim::devices::windows {
namespace {

template <typename T>
struct ComPtr {
  T* p = nullptr;
  ComPtr() = default;
  ComPtr(const ComPtr&) = delete;
  ComPtr& operator=(const ComPtr&) = delete;
  ComPtr(ComPtr&& o) noexcept : p(o.p) { o.p = nullptr; }
  ComPtr& operator=(ComPtr&& o) noexcept {
    if (this != &o) {
      Reset();
      p = o.p;
      o.p = nullptr;
    }
    return *this;
  }
  ~ComPtr() { Reset(); }
  void Reset() {
    if (p) p->Release();
    p = nullptr;
  }
  void** Out() {
    Reset();
    return reinterpret_cast<void**>(&p);
  }
};

std::string Hresult(HRESULT hr) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08lx", static_cast<unsigned long>(hr));
  return buf;
}

template <typename T>
bool ReadFixed(dxcore::IAdapter* adapter, dxcore::Property property, T& out) {
  if (!adapter->IsPropertySupported(property)) return false;
  return SUCCEEDED(adapter->GetProperty(property, sizeof(T), &out));
}

std::string ReadString(dxcore::IAdapter* adapter, dxcore::Property property) {
  if (!adapter->IsPropertySupported(property)) return {};
  std::size_t size = 0;
  if (FAILED(adapter->GetPropertySize(property, &size)) || size == 0) return {};
  std::string text(size, '\0');
  if (FAILED(adapter->GetProperty(property, size, text.data()))) return {};
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  // DXCore's DriverDescription is "a NULL-terminated array of CHAR that describes the driver, in
  // UTF-8 encoding" (learn.microsoft.com, dxcore_interface.h, DXCoreAdapterProperty). It is only
  // shown (the device table, the explanation annotation): bytes that are not UTF-8 appear as \xHH.
  return EscapeInvalidUtf8(text);
}

}  // namespace

struct DxCoreAdapters::State {
  HMODULE module = nullptr;
  ComPtr<dxcore::IAdapterFactory> factory;
  std::vector<ComPtr<dxcore::IAdapterList>> lists;  // the snapshot Enumerate() took
};

DxCoreAdapters::DxCoreAdapters() : state_(std::make_unique<State>()) {
  state_->module = LoadLibraryExW(L"dxcore.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
  if (!state_->module) {
    throw std::runtime_error("dxcore.dll could not be loaded (error " +
                             std::to_string(GetLastError()) +
                             "): DXCore needs Windows 10 1903 or Windows Server 2022 and later");
  }
  auto create = reinterpret_cast<dxcore::CreateAdapterFactoryFn>(
      reinterpret_cast<void*>(GetProcAddress(state_->module, "DXCoreCreateAdapterFactory")));
  if (!create) {
    FreeLibrary(state_->module);
    throw std::runtime_error("dxcore.dll has no DXCoreCreateAdapterFactory");
  }
  const HRESULT hr = create(dxcore::kIidAdapterFactory, state_->factory.Out());
  if (FAILED(hr) || !state_->factory.p) {
    FreeLibrary(state_->module);
    throw std::runtime_error("DXCoreCreateAdapterFactory failed: " + Hresult(hr));
  }
}

DxCoreAdapters::~DxCoreAdapters() {
  state_->lists.clear();
  state_->factory.Reset();
  FreeLibrary(state_->module);
}

std::vector<DxCoreFacts> DxCoreAdapters::Enumerate() {
  state_->lists.clear();
  std::map<std::uint64_t, DxCoreFacts> by_luid;
  for (const GUID* attribute :
       {&dxcore::kAttributeD3D12Graphics, &dxcore::kAttributeD3D12CoreCompute}) {
    ComPtr<dxcore::IAdapterList> list;
    const HRESULT hr =
        state_->factory.p->CreateAdapterList(1, attribute, dxcore::kIidAdapterList, list.Out());
    if (FAILED(hr) || !list.p) {
      throw std::runtime_error("IDXCoreAdapterFactory::CreateAdapterList failed: " + Hresult(hr));
    }
    const std::uint32_t count = list.p->GetAdapterCount();
    for (std::uint32_t i = 0; i < count; ++i) {
      ComPtr<dxcore::IAdapter> adapter;
      if (FAILED(list.p->GetAdapter(i, dxcore::kIidAdapter, adapter.Out())) || !adapter.p ||
          !adapter.p->IsValid()) {
        continue;  // removed since the list was made: the list is stale and will be re-read
      }
      LUID luid{};
      if (!ReadFixed(adapter.p, dxcore::Property::kInstanceLuid, luid)) continue;
      const std::uint64_t key =
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(luid.HighPart)) << 32) |
          luid.LowPart;
      auto& facts = by_luid[key];
      facts.luid = key;
      dxcore::HardwareId hwid{};
      if (ReadFixed(adapter.p, dxcore::Property::kHardwareId, hwid)) {
        facts.vendor_id = hwid.vendor_id;
        facts.device_id = hwid.device_id;
        facts.subsystem_id = hwid.subsystem_id;
        facts.revision = hwid.revision;
      }
      facts.description = ReadString(adapter.p, dxcore::Property::kDriverDescription);
      ReadFixed(adapter.p, dxcore::Property::kDriverVersion, facts.driver_version);
      ReadFixed(adapter.p, dxcore::Property::kDedicatedAdapterMemory, facts.dedicated_memory);
      bool flag = true;
      if (ReadFixed(adapter.p, dxcore::Property::kIsHardware, flag)) facts.hardware = flag;
      if (ReadFixed(adapter.p, dxcore::Property::kIsIntegrated, flag)) facts.integrated = flag;
      if (ReadFixed(adapter.p, dxcore::Property::kIsDetachable, flag)) facts.detachable = flag;
      if (attribute == &dxcore::kAttributeD3D12Graphics) {
        facts.d3d12_graphics = true;
      } else {
        facts.d3d12_core_compute = true;
      }
    }
    state_->lists.push_back(std::move(list));
  }
  std::vector<DxCoreFacts> out;
  for (auto& [luid, facts] : by_luid) out.push_back(std::move(facts));
  return out;
}

bool DxCoreAdapters::Stale() const {
  if (state_->lists.empty()) return true;
  for (const auto& list : state_->lists) {
    if (list.p->IsStale()) return true;
  }
  return false;
}

}  // namespace dxshim::devices::windows
