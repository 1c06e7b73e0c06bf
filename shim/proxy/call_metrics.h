// Relayed calls by method and gRPC code, and their latency: the only metrics on the relay path,
// so the ones that must cost next to nothing. A method's series are created the first time it is
// seen and then found with one hash lookup under a shared lock; counters and the histogram are
// atomics (the histogram's bucket update takes prometheus-cpp's uncontended mutex).
#pragma once

#include <grpcpp/support/status.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dxshim {

class CallMetrics {
 public:
  explicit CallMetrics(prometheus::Registry& registry);
  // `method` is the full gRPC method name, "/runtime.v1.RuntimeService/Version".
  void Record(std::string_view method, grpc::StatusCode code,
              std::chrono::steady_clock::duration elapsed);

  // At most this many distinct methods get series of their own; later ones (and every method
  // outside the CRI's runtime.v1 services) are counted as service="other", method="other", so
  // that a caller cannot grow the scrape without bound.
  static constexpr std::size_t kMaxMethods = 64;

 private:
  static constexpr std::size_t kCodes = 17;  // grpc::StatusCode 0..16
  struct Method {
    prometheus::Labels labels;
    prometheus::Histogram* duration = nullptr;
    std::array<std::atomic<prometheus::Counter*>, kCodes> calls{};
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  Method& Find(std::string_view method);
  Method& Add(std::string_view method);

  prometheus::Family<prometheus::Counter>& calls_;
  prometheus::Family<prometheus::Histogram>& duration_;
  std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Method>, Hash, std::equal_to<>> methods_;
  Method* other_ = nullptr;  // created the first time a call needs it (under mutex_)
};

}  // namespace dxshim
