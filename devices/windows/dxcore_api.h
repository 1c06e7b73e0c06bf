// The part of the DXCore API (dxcore_interface.h) dxshim uses, declared here because mingw ships
// no DXCore headers. IIDs, enum values and vtable order are the public ABI of dxcore.dll
// (Windows 10 1903+ / Server 2022); the order of methods below must match it exactly.
#pragma once

#include <unknwn.h>
#include <windows.h>

#include <cstddef>
#include <cstdint>

namespace dxshim::devices::windows::dxcore {

enum class Property : std::uint32_t {
  kInstanceLuid = 0,
  kDriverVersion = 1,
  kDriverDescription = 2,
  kHardwareId = 3,
  kDedicatedAdapterMemory = 7,
  kIsHardware = 11,
  kIsIntegrated = 12,
  kIsDetachable = 13,
};

struct HardwareId {
  std::uint32_t vendor_id;
  std::uint32_t device_id;
  std::uint32_t subsystem_id;
  std::uint32_t revision;
};

// {f0db4c7f-fe5a-42a2-bd62-f2a6cf6fc83e}
inline constexpr GUID kIidAdapter = {
    0xf0db4c7f, 0xfe5a, 0x42a2, {0xbd, 0x62, 0xf2, 0xa6, 0xcf, 0x6f, 0xc8, 0x3e}};
// {526c7776-40e9-459b-b711-f32ad76dfc28}
inline constexpr GUID kIidAdapterList = {
    0x526c7776, 0x40e9, 0x459b, {0xb7, 0x11, 0xf3, 0x2a, 0xd7, 0x6d, 0xfc, 0x28}};
// {78ee5945-c36e-4b13-a669-005dd11c0f06}
inline constexpr GUID kIidAdapterFactory = {
    0x78ee5945, 0xc36e, 0x4b13, {0xa6, 0x69, 0x00, 0x5d, 0xd1, 0x1c, 0x0f, 0x06}};
// DXCORE_ADAPTER_ATTRIBUTE_D3D12_GRAPHICS {0c9ece4d-2f6e-4f01-8c96-e89e331b47b1}
inline constexpr GUID kAttributeD3D12Graphics = {
    0x0c9ece4d, 0x2f6e, 0x4f01, {0x8c, 0x96, 0xe8, 0x9e, 0x33, 0x1b, 0x47, 0xb1}};
// DXCORE_ADAPTER_ATTRIBUTE_D3D12_CORE_COMPUTE {248e2800-a793-4724-abaa-23a6de1be090}
inline constexpr GUID kAttributeD3D12CoreCompute = {
    0x248e2800, 0xa793, 0x4724, {0xab, 0xaa, 0x23, 0xa6, 0xde, 0x1b, 0xe0, 0x90}};

// NOLINTBEGIN: COM interfaces keep the ABI's names and raw pointers.
// A virtual destructor would add a vtable slot and break the ABI; COM objects are released
// through IUnknown::Release, never deleted.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
#endif
struct IAdapter : public IUnknown {
  virtual bool STDMETHODCALLTYPE IsValid() = 0;
  virtual bool STDMETHODCALLTYPE IsAttributeSupported(REFGUID attribute) = 0;
  virtual bool STDMETHODCALLTYPE IsPropertySupported(Property property) = 0;
  virtual HRESULT STDMETHODCALLTYPE GetProperty(Property property, std::size_t size,
                                                void* data) = 0;
  virtual HRESULT STDMETHODCALLTYPE GetPropertySize(Property property, std::size_t* size) = 0;
  // QueryState, SetState, GetFactory and the Is*Supported for them follow; dxshim calls none.
};

struct IAdapterList : public IUnknown {
  virtual HRESULT STDMETHODCALLTYPE GetAdapter(std::uint32_t index, REFIID riid,
                                               void** adapter) = 0;
  virtual std::uint32_t STDMETHODCALLTYPE GetAdapterCount() = 0;
  virtual bool STDMETHODCALLTYPE IsStale() = 0;
  // GetFactory, Sort, IsAdapterPreferenceSupported follow; unused.
};

struct IAdapterFactory : public IUnknown {
  virtual HRESULT STDMETHODCALLTYPE CreateAdapterList(std::uint32_t attribute_count,
                                                      const GUID* attributes, REFIID riid,
                                                      void** list) = 0;
  // GetAdapterByLuid and the notification methods follow; unused.
};
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
// NOLINTEND

using CreateAdapterFactoryFn = HRESULT(WINAPI*)(REFIID riid, void** factory);

}  // namespace dxshim::devices::windows::dxcore
