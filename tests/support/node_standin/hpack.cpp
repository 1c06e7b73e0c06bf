// HPACK (RFC 7541): integers (§5.1), strings (§5.2), the static (§2.3.1, Appendix A) and dynamic
// (§2.3.2, §4) tables, and the field representations of §6.
#include "tests/support/node_standin/hpack.h"

#include <array>
#include <cstdint>

#include "tests/support/node_standin/hpack_huffman.h"

namespace dxshim::test::node_standin {

namespace {

struct StaticEntry {
  const char* name;
  const char* value;
};

// RFC 7541 Appendix A, indexes 1 to 61.
constexpr std::array<StaticEntry, 61> kStaticTable = {{
    {":authority", ""},
    {":method", "GET"},
    {":method", "POST"},
    {":path", "/"},
    {":path", "/index.html"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "200"},
    {":status", "204"},
    {":status", "206"},
    {":status", "304"},
    {":status", "400"},
    {":status", "404"},
    {":status", "500"},
    {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"},
    {"accept-language", ""},
    {"accept-ranges", ""},
    {"accept", ""},
    {"access-control-allow-origin", ""},
    {"age", ""},
    {"allow", ""},
    {"authorization", ""},
    {"cache-control", ""},
    {"content-disposition", ""},
    {"content-encoding", ""},
    {"content-language", ""},
    {"content-length", ""},
    {"content-location", ""},
    {"content-range", ""},
    {"content-type", ""},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"expect", ""},
    {"expires", ""},
    {"from", ""},
    {"host", ""},
    {"if-match", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"if-range", ""},
    {"if-unmodified-since", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"max-forwards", ""},
    {"proxy-authenticate", ""},
    {"proxy-authorization", ""},
    {"range", ""},
    {"referer", ""},
    {"refresh", ""},
    {"retry-after", ""},
    {"server", ""},
    {"set-cookie", ""},
    {"strict-transport-security", ""},
    {"transfer-encoding", ""},
    {"user-agent", ""},
    {"vary", ""},
    {"via", ""},
    {"www-authenticate", ""},
}};

// A decoded header list larger than this is refused: nothing the stand-ins serve sends more, and
// a hostile block must not make one grow without bound.
constexpr std::size_t kMaxHeaderListSize = 1 << 20;

// RFC 7541 §5.1: an integer with an N-bit prefix. Values over 2^32 are refused (no field of a
// header block is that large).
bool ReadInteger(std::string_view& in, int prefix_bits, std::uint64_t& value) {
  if (in.empty()) return false;
  const std::uint64_t mask = (1u << prefix_bits) - 1;
  value = static_cast<unsigned char>(in.front()) & mask;
  in.remove_prefix(1);
  if (value < mask) return true;
  for (int shift = 0;; shift += 7) {
    if (in.empty() || shift > 28) return false;
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    value += static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if (value > 0xFFFFFFFFu) return false;
    if ((byte & 0x80) == 0) return true;
  }
}

// RFC 7541 §5.2: a string literal, Huffman-coded when its first bit is set.
bool ReadString(std::string_view& in, std::string& out, std::string& error) {
  if (in.empty()) {
    error = "a string literal is cut short";
    return false;
  }
  const bool huffman = (static_cast<unsigned char>(in.front()) & 0x80) != 0;
  std::uint64_t length = 0;
  if (!ReadInteger(in, 7, length) || length > in.size()) {
    error = "a string literal's length is invalid or past the block's end";
    return false;
  }
  const auto bytes = in.substr(0, static_cast<std::size_t>(length));
  in.remove_prefix(static_cast<std::size_t>(length));
  out.clear();
  if (!huffman) {
    out.assign(bytes);
    return true;
  }
  if (!HuffmanDecode(bytes, out)) {
    error = "a Huffman-coded string is invalid (EOS, or bad padding)";
    return false;
  }
  return true;
}

void PutInteger(std::string& out, std::uint8_t first_bits, int prefix_bits, std::uint64_t value) {
  const std::uint64_t mask = (1u << prefix_bits) - 1;
  if (value < mask) {
    out += static_cast<char>(first_bits | value);
    return;
  }
  out += static_cast<char>(first_bits | mask);
  value -= mask;
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void PutString(std::string& out, std::string_view text) {
  PutInteger(out, 0x00, 7, text.size());  // H = 0: no Huffman coding
  out.append(text);
}

std::size_t EntrySize(const HeaderField& field) {  // RFC 7541 §4.1
  return field.name.size() + field.value.size() + 32;
}

}  // namespace

const std::string* FindHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& field : headers)
    if (field.name == name) return &field.value;
  return nullptr;
}

bool HpackDecoder::Lookup(std::size_t index, HeaderField& field, std::string& error) const {
  // RFC 7541 §2.3.3: 1-61 the static table, from 62 the dynamic table newest first; 0 is invalid.
  if (index == 0) {
    error = "index 0";
    return false;
  }
  if (index <= kStaticTable.size()) {
    field = {kStaticTable[index - 1].name, kStaticTable[index - 1].value};
    return true;
  }
  const std::size_t dynamic = index - kStaticTable.size() - 1;
  if (dynamic >= table_.size()) {
    error = "index " + std::to_string(index) + " is past the dynamic table (" +
            std::to_string(table_.size()) + " entries)";
    return false;
  }
  field = table_[dynamic];
  return true;
}

void HpackDecoder::Evict() {  // RFC 7541 §4.3, §4.4: oldest first
  while (size_ > capacity_ && !table_.empty()) {
    size_ -= EntrySize(table_.back());
    table_.pop_back();
  }
}

void HpackDecoder::Insert(HeaderField field) {
  // RFC 7541 §4.4: older entries make room; one larger than the table empties it, itself too.
  const std::size_t size = EntrySize(field);
  table_.push_front(std::move(field));
  size_ += size;
  Evict();
}

bool HpackDecoder::Decode(std::string_view block, HeaderList& out, std::string& error) {
  out.clear();
  error.clear();
  std::size_t list_size = 0;
  bool field_seen = false;
  while (!block.empty()) {
    const auto first = static_cast<unsigned char>(block.front());
    if ((first & 0xE0) == 0x20) {  // §6.3: dynamic table size update, 001xxxxx
      std::uint64_t size = 0;
      if (!ReadInteger(block, 5, size)) {
        error = "a table size update is malformed";
        return false;
      }
      // §4.2: it comes at the start of a block, and within the announced maximum.
      if (field_seen || size > max_table_size_) {
        error = field_seen ? "a table size update after a header field"
                           : "a table size update to " + std::to_string(size) + " over " +
                                 std::to_string(max_table_size_);
        return false;
      }
      capacity_ = static_cast<std::size_t>(size);
      Evict();
      continue;
    }
    field_seen = true;
    HeaderField field;
    if (first & 0x80) {  // §6.1: indexed header field, 1xxxxxxx
      std::uint64_t index = 0;
      if (!ReadInteger(block, 7, index) || !Lookup(static_cast<std::size_t>(index), field, error)) {
        error = "an indexed field: " + (error.empty() ? "malformed" : error);
        return false;
      }
    } else {
      // §6.2.1 with incremental indexing 01xxxxxx (6-bit name index), §6.2.3 never indexed
      // 0001xxxx and §6.2.2 without indexing 0000xxxx (4-bit name index).
      const bool indexing = (first & 0xC0) == 0x40;
      std::uint64_t name_index = 0;
      if (!ReadInteger(block, indexing ? 6 : 4, name_index)) {
        error = "a literal field is malformed";
        return false;
      }
      if (name_index != 0) {
        HeaderField named;
        if (!Lookup(static_cast<std::size_t>(name_index), named, error)) {
          error.insert(0, "a literal field's name: ");
          return false;
        }
        field.name = std::move(named.name);
      } else if (!ReadString(block, field.name, error)) {
        return false;
      }
      if (!ReadString(block, field.value, error)) return false;
      if (indexing) Insert(field);
    }
    list_size += EntrySize(field);
    if (list_size > kMaxHeaderListSize) {
      error = "the header list is over " + std::to_string(kMaxHeaderListSize) + " bytes";
      return false;
    }
    out.push_back(std::move(field));
  }
  return true;
}

std::string HpackEncode(const HeaderList& headers) {
  std::string out;
  for (const auto& field : headers) {
    std::size_t name_index = 0;
    for (std::size_t i = 0; i < kStaticTable.size() && name_index == 0; ++i)
      if (field.name == kStaticTable[i].name) name_index = i + 1;
    PutInteger(out, 0x00, 4, name_index);  // 0000xxxx: literal without indexing
    if (name_index == 0) PutString(out, field.name);
    PutString(out, field.value);
  }
  return out;
}

}  // namespace dxshim::test::node_standin
