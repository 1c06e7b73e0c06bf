// Protocol Buffers' wire format by hand (https://protobuf.dev/programming-guides/encoding/).
#include "tests/support/node_standin/protobuf_wire.h"

namespace dxshim::test::node_standin::proto {

namespace {

bool ReadVarint(std::string_view& in, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;  // more than ten bytes
}

bool ReadFixed(std::string_view& in, std::size_t size, std::uint64_t& value) {
  if (in.size() < size) return false;
  value = 0;
  for (std::size_t i = 0; i < size; ++i)  // little-endian
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(size);
  return true;
}

}  // namespace

void PutVarint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void PutUint(std::string& out, std::uint32_t field, std::uint64_t value) {
  PutVarint(out, (static_cast<std::uint64_t>(field) << 3) | kVarint);
  PutVarint(out, value);
}

void PutBytes(std::string& out, std::uint32_t field, std::string_view bytes) {
  PutVarint(out, (static_cast<std::uint64_t>(field) << 3) | kLength);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

bool Reader::Next(Field& field) {
  if (!ok_ || rest_.empty()) return false;
  std::uint64_t tag = 0;
  ok_ = ReadVarint(rest_, tag) && (tag >> 3) != 0 && (tag >> 3) <= 0x1FFFFFFF;
  if (!ok_) return false;
  field = Field{};
  field.number = static_cast<std::uint32_t>(tag >> 3);
  field.wire_type = static_cast<std::uint32_t>(tag & 7);
  switch (field.wire_type) {
    case kVarint:
      ok_ = ReadVarint(rest_, field.varint);
      break;
    case kFixed64:
      ok_ = ReadFixed(rest_, 8, field.varint);
      break;
    case kFixed32:
      ok_ = ReadFixed(rest_, 4, field.varint);
      break;
    case kLength: {
      std::uint64_t size = 0;
      ok_ = ReadVarint(rest_, size) && size <= rest_.size();
      if (ok_) {
        field.bytes = rest_.substr(0, static_cast<std::size_t>(size));
        rest_.remove_prefix(static_cast<std::size_t>(size));
      }
      break;
    }
    default:  // groups (3, 4) are not used by the protos the stand-ins speak
      ok_ = false;
  }
  return ok_;
}

std::optional<std::string_view> BytesField(std::string_view message, std::uint32_t field) {
  Reader reader(message);
  Field f;
  std::optional<std::string_view> found;
  while (reader.Next(f))
    if (f.number == field && f.wire_type == kLength) found = f.bytes;
  return reader.ok() ? found : std::nullopt;
}

std::optional<std::uint64_t> VarintField(std::string_view message, std::uint32_t field) {
  Reader reader(message);
  Field f;
  std::optional<std::uint64_t> found;
  while (reader.Next(f))
    if (f.number == field && f.wire_type == kVarint) found = f.varint;
  return reader.ok() ? found : std::nullopt;
}

}  // namespace dxshim::test::node_standin::proto
