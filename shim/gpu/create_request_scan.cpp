#include "shim/gpu/create_request_scan.h"

#include <google/protobuf/wire_format_lite.h>

#include <cstdint>
#include <optional>

#include "devices/allocation/device_request.h"
#include "runtime/v1/api.pb.h"
#include "shim/base/dxshim_keys.h"

namespace dxshim {
namespace {

using Wire = google::protobuf::internal::WireFormatLite;
using runtime::v1::ContainerConfig;
using runtime::v1::CreateContainerRequest;
using runtime::v1::PodSandboxConfig;

// Protobuf's wire format, just enough to walk length-delimited fields: tags and wire types as
// protobuf's WireFormatLite defines them, varints read by hand over the bytes. protobuf's own
// CodedInputStream made this scan (create_container_bench's pass-through line) 1.9 times slower
// with one stream per message, 3 times with one stream and PushLimit per nested message.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  bool ok() const { return ok_; }

  // Reads the next field; for length-delimited fields sets `bytes`. False at the end or on error.
  bool Next(int& field, std::string_view& bytes) {
    if (done() || !ok_) return false;
    std::uint64_t key = 0;
    if (!Varint(key)) return Fail();
    // WireFormatLite::GetTagFieldNumber and GetTagWireType, on the 64 bits read.
    field = static_cast<int>(key >> Wire::kTagTypeBits);
    bytes = {};
    switch (static_cast<Wire::WireType>(key & Wire::kTagTypeMask)) {
      case Wire::WIRETYPE_VARINT: {
        std::uint64_t ignored = 0;
        return Varint(ignored) || Fail();
      }
      case Wire::WIRETYPE_FIXED64:
        return Skip(8);
      case Wire::WIRETYPE_FIXED32:
        return Skip(4);
      case Wire::WIRETYPE_LENGTH_DELIMITED: {
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

// A map entry's key: field 1 of every map field's entry message (protobuf's map encoding).
constexpr int kMapKey = 1;

// Whether the map entry (a length-delimited map field's bytes) has a key `wanted` accepts;
// nullopt on malformed input.
template <typename Wanted>
std::optional<bool> EntryKeyIs(std::string_view entry, const Wanted& wanted) {
  Reader e(entry);
  int field = 0;
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
  int field = 0;
  std::string_view bytes;
  while (r.Next(field, bytes)) {
    if (field == ContainerConfig::kDevicesFieldNumber) return true;
    if (field != ContainerConfig::kAnnotationsFieldNumber) continue;
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
  int field = 0;
  std::string_view entry;
  while (r.Next(field, entry)) {
    if (field != PodSandboxConfig::kAnnotationsFieldNumber) continue;
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
  int field = 0;
  std::string_view bytes;
  while (r.Next(field, bytes)) {
    std::optional<bool> found = false;
    if (field == CreateContainerRequest::kConfigFieldNumber) found = HasDeviceOrSlots(bytes);
    if (field == CreateContainerRequest::kSandboxConfigFieldNumber)
      found = HasDxshimAnnotation(bytes);
    if (!found || *found) return true;
  }
  return !r.ok();
}

}  // namespace dxshim
