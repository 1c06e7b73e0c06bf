#include "shim/gpu/create_request_scan.h"

#include <cstdint>
#include <optional>

#include "devices/allocation/device_request.h"
#include "devices/dxshim_keys.h"

namespace dxshim {
namespace {

// Protobuf wire format, just enough to walk length-delimited fields.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  bool ok() const { return ok_; }

  // Reads the next field; for length-delimited fields sets `bytes`. False at the end or on error.
  bool Next(std::uint32_t& field, std::string_view& bytes) {
    if (done() || !ok_) return false;
    std::uint64_t key = 0;
    if (!Varint(key)) return Fail();
    field = static_cast<std::uint32_t>(key >> 3);
    bytes = {};
    switch (key & 7) {
      case 0: {
        std::uint64_t ignored = 0;
        return Varint(ignored) || Fail();
      }
      case 1:
        return Skip(8);
      case 5:
        return Skip(4);
      case 2: {
        std::uint64_t length = 0;
        if (!Varint(length) || length > data_.size() - pos_) return Fail();
        bytes = data_.substr(pos_, length);
        pos_ += length;
        return true;
      }
      default:
        return Fail();  // groups are not used by CRI
    }
  }

 private:
  bool Varint(std::uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
      out |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }
  bool Skip(std::size_t n) {
    if (n > data_.size() - pos_) return Fail();
    pos_ += n;
    return true;
  }
  bool Fail() {
    ok_ = false;
    return false;
  }

  std::string_view data_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Field numbers from upstream k8s.io/cri-api pkg/apis/runtime/v1/api.proto, as
// cri-api/runtime/v1/api.proto declares them (tests/cri-api/runtime/v1/api_test.cpp pins them).
constexpr std::uint32_t kRequestConfig = 2;         // CreateContainerRequest.config
constexpr std::uint32_t kRequestSandboxConfig = 3;  // CreateContainerRequest.sandbox_config
constexpr std::uint32_t kConfigDevices = 8;         // ContainerConfig.devices
constexpr std::uint32_t kConfigAnnotations = 10;    // ContainerConfig.annotations
constexpr std::uint32_t kSandboxAnnotations = 7;    // PodSandboxConfig.annotations
constexpr std::uint32_t kMapKey = 1;

// Whether the map entry (a length-delimited map field's bytes) has a key `wanted` accepts;
// nullopt on malformed input.
template <typename Wanted>
std::optional<bool> EntryKeyIs(std::string_view entry, const Wanted& wanted) {
  Reader e(entry);
  std::uint32_t field = 0;
  std::string_view value;
  while (e.Next(field, value)) {
    if (field == kMapKey && wanted(value)) return true;
  }
  if (!e.ok()) return std::nullopt;
  return false;
}

// A device kubelet put there, or an annotation dxshim's device plugin gave kubelet.
std::optional<bool> HasDeviceOrSlots(std::string_view config) {
  Reader r(config);
  std::uint32_t field = 0;
  std::string_view bytes;
  while (r.Next(field, bytes)) {
    if (field == kConfigDevices) return true;
    if (field != kConfigAnnotations) continue;
    const auto slots = EntryKeyIs(bytes, [](std::string_view key) {
      return key == keys::kPluginSlotsAnnotation || key == keys::kPluginMemoryUnitsAnnotation;
    });
    if (!slots || *slots) return slots;
  }
  if (!r.ok()) return std::nullopt;
  return false;
}

std::optional<bool> HasDxshimAnnotation(std::string_view sandbox_config) {
  Reader r(sandbox_config);
  std::uint32_t field = 0;
  std::string_view entry;
  while (r.Next(field, entry)) {
    if (field != kSandboxAnnotations) continue;
    const auto found =
        EntryKeyIs(entry, [](std::string_view key) { return key.starts_with(keys::kPrefix); });
    if (!found || *found) return found;
  }
  if (!r.ok()) return std::nullopt;
  return false;
}

}  // namespace

bool MayNeedDevices(std::string_view request) {
  Reader r(request);
  std::uint32_t field = 0;
  std::string_view bytes;
  while (r.Next(field, bytes)) {
    std::optional<bool> found = false;
    if (field == kRequestConfig) found = HasDeviceOrSlots(bytes);
    if (field == kRequestSandboxConfig) found = HasDxshimAnnotation(bytes);
    if (!found || *found) return true;
  }
  return !r.ok();
}

}  // namespace dxshim
