// Protocol Buffers' wire format, by hand (the stand-ins link no protobuf): varints, tags,
// length-delimited fields, and a reader over a message's fields
// (https://protobuf.dev/programming-guides/encoding/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dxshim::test::node_standin::proto {

// Wire types (encoding.md "Message Structure"): VARINT 0, I64 1, LEN 2, I32 5.
inline constexpr std::uint32_t kVarint = 0;
inline constexpr std::uint32_t kFixed64 = 1;
inline constexpr std::uint32_t kLength = 2;
inline constexpr std::uint32_t kFixed32 = 5;

void PutVarint(std::string& out, std::uint64_t value);
// FIELD as a varint (uint32, uint64, int64 two's complement, bool, enum).
void PutUint(std::string& out, std::uint32_t field, std::uint64_t value);
// FIELD as length-delimited bytes: a string, bytes or an embedded message.
void PutBytes(std::string& out, std::uint32_t field, std::string_view bytes);

struct Field {
  std::uint32_t number = 0;
  std::uint32_t wire_type = 0;
  std::uint64_t varint = 0;  // kVarint, kFixed64, kFixed32
  std::string_view bytes;    // kLength
};

// The fields of one message in order; Next() false at its end or at malformed bytes (ok() says).
class Reader {
 public:
  explicit Reader(std::string_view message) : rest_(message) {}
  bool Next(Field& field);
  bool ok() const { return ok_; }

 private:
  std::string_view rest_;
  bool ok_ = true;
};

// The last occurrence of FIELD (proto3: the last one wins) as bytes or as a varint; nothing when
// absent or when MESSAGE is malformed.
std::optional<std::string_view> BytesField(std::string_view message, std::uint32_t field);
std::optional<std::uint64_t> VarintField(std::string_view message, std::uint32_t field);

}  // namespace dxshim::test::node_standin::proto
