// Windows only: the node's adapters as DXCore lists them (D3D12 graphics and D3D12 core compute
// adapters), and whether that list has gone stale (an adapter arrived, left or was disabled).
#pragma once

#include <memory>
#include <vector>

#include "devices/windows_adapter.h"

namespace dxshim::devices::windows {

class DxCoreAdapters {
 public:
  // Loads dxcore.dll at run time. Throws std::runtime_error saying what is missing when this
  // Windows has no DXCore (before Windows 10 1903 / Server 2022) or the factory fails.
  DxCoreAdapters();
  ~DxCoreAdapters();
  DxCoreAdapters(const DxCoreAdapters&) = delete;
  DxCoreAdapters& operator=(const DxCoreAdapters&) = delete;

  // Takes a fresh snapshot and returns one entry per adapter (LUID), software adapters
  // included (SkipReason() decides). Throws std::runtime_error naming the failing call.
  std::vector<DxCoreFacts> Enumerate();

  // True when the snapshot Enumerate() took no longer matches the system (IsStale() of the
  // DXCore lists), or no snapshot was taken yet. Cheap: no enumeration.
  bool Stale() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dxshim::devices::windows
