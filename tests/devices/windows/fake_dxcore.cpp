// A stand-in dxcore.dll for the wine tests. Wine has no DXCore and this machine has no GPU, so
// the test installs this DLL into the Wine prefix's System32 and dxshim-devices.exe loads it the
// way it loads the real one. It reports four adapters through the interfaces of
// devices/windows/dxcore_api.h: an NVIDIA T4 and an NVIDIA A10 (D3D12 graphics + core compute),
// the Microsoft Basic Render Driver (software) and a compute-only (MCDM) accelerator. It proves the
// enumeration, merging and skipping logic run; it cannot prove the real dxcore.dll's ABI (only a
// Windows node can). Each adapter's LUID follows the stand-in driver's generation
// (fake_gpu_generation.h), and a list goes stale once the generation changed after it was made,
// as a real list does when adapters restart with new LUIDs.
#include <atomic>
#include <cstring>
#include <iterator>
#include <new>

#include "devices/windows/dxcore_api.h"
#include "tests/devices/windows/fake_gpu_generation.h"

namespace dx = dxshim::devices::windows::dxcore;

namespace {

struct FakeAdapterData {
  LUID luid;
  dx::HardwareId hwid;
  const char* description;
  std::uint64_t driver_version;
  std::size_t memory;
  bool hardware;
  bool graphics;
  bool compute;
};

constexpr FakeAdapterData kAdapters[] = {
    {{0x0000d1a7, 0},
     {0x10de, 0x1eb8, 0x12a210de, 0xa1},
     "NVIDIA Tesla T4",
     0x001f000f0e9cull,
     15ull << 30,
     true,
     true,
     true},
    {{0x0000e0b2, 0},
     {0x1414, 0x008c, 0, 0},
     "Microsoft Basic Render Driver",
     0,
     0,
     false,
     true,
     true},
    {{0x0000f3c1, 1},
     {0x1002, 0x74a1, 0x0c341002, 0x00},
     "AMD Instinct MI300X",
     0,
     192ull << 30,
     true,
     false,
     true},
    {{0x0000d1b8, 0},
     {0x10de, 0x2236, 0x148210de, 0xa1},
     "NVIDIA A10",
     0x001f000f0e9cull,
     24ull << 30,
     true,
     true,
     true},
};

bool SameGuid(REFGUID a, const GUID& b) { return std::memcmp(&a, &b, sizeof(GUID)) == 0; }

template <typename Base>
class RefCounted : public Base {
 public:
  HRESULT STDMETHODCALLTYPE QueryInterface(REFIID, void** out) override {
    *out = nullptr;
    return E_NOINTERFACE;
  }
  ULONG STDMETHODCALLTYPE AddRef() override { return ++refs_; }
  ULONG STDMETHODCALLTYPE Release() override {
    const ULONG left = --refs_;
    if (left == 0) delete this;
    return left;
  }
  virtual ~RefCounted() = default;

 private:
  std::atomic<ULONG> refs_{1};
};

class Adapter : public RefCounted<dx::IAdapter> {
 public:
  Adapter(const FakeAdapterData& data, DWORD generation) : data_(data) {
    data_.luid = fake_gpu::Renumbered(data.luid, generation);
  }
  bool STDMETHODCALLTYPE IsValid() override { return true; }
  bool STDMETHODCALLTYPE IsAttributeSupported(REFGUID attribute) override {
    return (data_.graphics && SameGuid(attribute, dx::kAttributeD3D12Graphics)) ||
           (data_.compute && SameGuid(attribute, dx::kAttributeD3D12CoreCompute));
  }
  bool STDMETHODCALLTYPE IsPropertySupported(dx::Property) override { return true; }
  HRESULT STDMETHODCALLTYPE GetPropertySize(dx::Property property, std::size_t* size) override {
    switch (property) {
      case dx::Property::kDriverDescription:
        *size = std::strlen(data_.description) + 1;
        return S_OK;
      default:
        return E_INVALIDARG;
    }
  }
  HRESULT STDMETHODCALLTYPE GetProperty(dx::Property property, std::size_t size,
                                        void* out) override {
    auto copy = [&](const void* value, std::size_t n) {
      if (size < n) return E_INVALIDARG;
      std::memcpy(out, value, n);
      return S_OK;
    };
    const bool integrated = false;
    const bool detachable = false;
    switch (property) {
      case dx::Property::kInstanceLuid:
        return copy(&data_.luid, sizeof(LUID));
      case dx::Property::kHardwareId:
        return copy(&data_.hwid, sizeof(data_.hwid));
      case dx::Property::kDriverDescription:
        return copy(data_.description, std::strlen(data_.description) + 1);
      case dx::Property::kDriverVersion:
        return copy(&data_.driver_version, sizeof(std::uint64_t));
      case dx::Property::kDedicatedAdapterMemory:
        return copy(&data_.memory, sizeof(std::size_t));
      case dx::Property::kIsHardware:
        return copy(&data_.hardware, sizeof(bool));
      case dx::Property::kIsIntegrated:
        return copy(&integrated, sizeof(bool));
      case dx::Property::kIsDetachable:
        return copy(&detachable, sizeof(bool));
    }
    return E_INVALIDARG;
  }

 private:
  FakeAdapterData data_;
};

class AdapterList : public RefCounted<dx::IAdapterList> {
 public:
  explicit AdapterList(const GUID& attribute) {
    for (const auto& a : kAdapters) {
      if ((a.graphics && SameGuid(attribute, dx::kAttributeD3D12Graphics)) ||
          (a.compute && SameGuid(attribute, dx::kAttributeD3D12CoreCompute))) {
        members_[count_++] = &a;
      }
    }
  }
  HRESULT STDMETHODCALLTYPE GetAdapter(std::uint32_t index, REFIID riid, void** out) override {
    if (index >= count_ || !SameGuid(riid, dx::kIidAdapter)) return E_INVALIDARG;
    *out = static_cast<dx::IAdapter*>(new Adapter(*members_[index], generation_));
    return S_OK;
  }
  std::uint32_t STDMETHODCALLTYPE GetAdapterCount() override { return count_; }
  bool STDMETHODCALLTYPE IsStale() override { return fake_gpu::Generation() != generation_; }

 private:
  DWORD generation_ = fake_gpu::Generation();
  const FakeAdapterData* members_[std::size(kAdapters)] = {};
  std::uint32_t count_ = 0;
};

class Factory : public RefCounted<dx::IAdapterFactory> {
 public:
  HRESULT STDMETHODCALLTYPE CreateAdapterList(std::uint32_t count, const GUID* attributes,
                                              REFIID riid, void** out) override {
    if (count != 1 || !SameGuid(riid, dx::kIidAdapterList)) return E_INVALIDARG;
    *out = static_cast<dx::IAdapterList*>(new AdapterList(attributes[0]));
    return S_OK;
  }
};

}  // namespace

extern "C" __declspec(dllexport) HRESULT WINAPI
    DXCoreCreateAdapterFactory(REFIID riid, void** out) {
  if (!SameGuid(riid, dx::kIidAdapterFactory)) return E_NOINTERFACE;
  *out = static_cast<dx::IAdapterFactory*>(new (std::nothrow) Factory());
  return *out ? S_OK : E_OUTOFMEMORY;
}
