// Who made CRI calls through dxshim's endpoint: one entry per client process (on Windows the
// client of its named pipe, by GetNamedPipeClientProcessId), counted on every admitted call.
// `dxshim install` asks dxshim for it (the method dxshim answers itself, local_method.h) to prove
// that the running kubelet talks to dxshim. Fed on the relay's one thread: a short lock, nothing
// that waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace dxshim {

struct CriClient {
  std::uint32_t pid = 0;
  std::string program;  // the executable's file name, lower case ("" when it cannot be read)
  bool operator==(const CriClient&) const = default;
};

struct CriCallerRecord {
  CriClient client;
  std::uint64_t calls = 0;
  std::int64_t first_call_unix_ms = 0;
  std::int64_t last_call_unix_ms = 0;
};

class CriCallers {
 public:
  // Keeps `capacity` clients: a new one beyond that replaces the one whose last call is oldest.
  explicit CriCallers(std::size_t capacity = 64) : capacity_(capacity) {}
  void Called(const CriClient& client);
  void Called(const CriClient& client, std::int64_t now_unix_ms);
  std::vector<CriCallerRecord> Snapshot() const;
  // `callback` is called once, with the client, at the first call of a client whose program is
  // `program` (lower case), on the caller's thread after the lock is let go: it must not wait.
  // Set it before calls can arrive.
  void OnFirstCallOf(std::string program, std::function<void(const CriClient&)> callback);

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<CriCallerRecord> records_;
  bool Record(const CriClient& client, std::int64_t now_unix_ms);  // under mutex_

  std::string watched_program_;
  std::function<void(const CriClient&)> on_first_call_;
};

}  // namespace dxshim
