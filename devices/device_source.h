// Where the shim's devices come from, and the snapshot of them it keeps: discovery never runs on
// the CreateContainer path. A background thread asks the source whether anything changed (cheap:
// a file's modification time, DXCore's IsStale) and only then loads it again.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "devices/device.h"
#include "devices/vendor_runtime_files.h"

namespace dxshim::devices {

// One place devices come from; make_device_source.h makes the one a spec names.
class DeviceSource {
 public:
  virtual ~DeviceSource() = default;
  virtual std::string Name() const = 0;
  // True when Load() could return something different from the last time it was called.
  virtual bool Changed() = 0;
  // Throws InventoryError / DiscoveryError / std::runtime_error when the source cannot be read.
  virtual std::vector<Device> Load() = 0;
  // What the last Load() left out and why (skipped adapters, refused registry values).
  virtual std::vector<std::string> Warnings() const { return {}; }
  // What the last Load() could not add and did not need (e.g. no NVML, so no NVIDIA UUIDs).
  virtual std::vector<std::string> DebugLines() const { return {}; }
};

struct SnapshotOptions {
  bool include_integrated = false;
  bool include_detachable = false;
  std::vector<VendorRuntimeFiles> extra_runtime_files;
  std::chrono::milliseconds refresh_interval{10000};
  // When the source cannot be read at start: false throws; true starts with no device (logged)
  // and keeps trying, so that the node's CRI keeps working while the operator fixes the source.
  bool tolerate_initial_failure = false;
  // Called with what each successful read of the source gives (after the filters), before those
  // devices are handed out: the shim notes which runtime files exist then.
  std::function<void(const std::vector<Device>& devices)> loaded;
};

// How often the snapshot's source was read, for metrics and readiness.
struct SnapshotStats {
  std::uint64_t loads = 0;     // successful reads of the source (the first one included)
  std::uint64_t failures = 0;  // reads that failed (the previous devices were kept)
  bool loaded = false;         // the source has been read successfully at least once
};

// The devices the shim hands out, as one immutable value: readers take a shared_ptr and keep a
// consistent view for as long as they need it.
struct Inventory {
  std::vector<Device> devices;
  std::uint64_t generation = 0;  // +1 for every change
};

class DeviceSnapshot {
 public:
  // Loads once, synchronously: an unreadable source at start-up throws unless the options
  // tolerate it.
  DeviceSnapshot(std::unique_ptr<DeviceSource> source, SnapshotOptions options);
  ~DeviceSnapshot();
  DeviceSnapshot(const DeviceSnapshot&) = delete;
  DeviceSnapshot& operator=(const DeviceSnapshot&) = delete;

  std::shared_ptr<const Inventory> Current() const;
  // Current()->generation without taking the snapshot (a relaxed read for caches).
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Checks the source now; returns true when the snapshot changed. A source that fails keeps
  // the previous snapshot (logged), so a half-written inventory file never empties the node.
  bool Refresh();
  // Reads the source now even when it reports no change (a runtime file the snapshot names has
  // vanished: the driver changed); returns true when the snapshot changed.
  bool Reload();
  // Refresh() every refresh_interval on a background thread until destruction.
  void StartBackgroundRefresh();
  // Waits until the generation differs from `seen` or `timeout` passes; returns the generation
  // then. For watchers (the device plugin's ListAndWatch, the node feature file).
  std::uint64_t WaitForChange(std::uint64_t seen, std::chrono::milliseconds timeout) const;
  SnapshotStats stats() const;
  std::string source_name() const { return source_->Name(); }

 private:
  std::vector<Device> Prepare(const std::vector<Device>& devices) const;
  bool Read(bool force);

  std::unique_ptr<DeviceSource> source_;
  SnapshotOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Inventory> current_;
  std::atomic<std::uint64_t> generation_{1};
  std::atomic<std::uint64_t> loads_{0};
  std::atomic<std::uint64_t> failures_{0};
  std::mutex refresh_mutex_;  // one Refresh() at a time
  std::condition_variable stop_cv_;
  mutable std::condition_variable changed_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// Calls `changed` with the new inventory, on a thread of its own, each time the snapshot
// changes from generation `seen` (what the caller already has), until destroyed (which waits for a
// call in progress). For the snapshot's watchers: the device plugin's ListAndWatch and the node
// feature file.
class SnapshotFollower {
 public:
  SnapshotFollower(const DeviceSnapshot& snapshot, std::uint64_t seen,
                   std::function<void(const Inventory& inventory)> changed);
  ~SnapshotFollower();
  SnapshotFollower(const SnapshotFollower&) = delete;
  SnapshotFollower& operator=(const SnapshotFollower&) = delete;

 private:
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace dxshim::devices
