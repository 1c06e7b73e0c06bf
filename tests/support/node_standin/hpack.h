// HPACK (RFC 7541), the header compression of HTTP/2: a decoder with the static table, the
// dynamic table and Huffman strings, for the header blocks real gRPC peers send, and an encoder
// that only writes literals (RFC 7541 §6.2.2, "without indexing"), which every decoder accepts.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace dxshim::test::node_standin {

struct HeaderField {
  std::string name;
  std::string value;
  bool operator==(const HeaderField&) const = default;
};
using HeaderList = std::vector<HeaderField>;

// The value of the first field named NAME (names are lower case in HTTP/2), or nullptr.
const std::string* FindHeader(const HeaderList& headers, std::string_view name);

class HpackDecoder {
 public:
  // MAX_TABLE_SIZE: the SETTINGS_HEADER_TABLE_SIZE this side announced (RFC 9113 §6.5.2;
  // 4096 unless announced), the most a dynamic table size update may ask for.
  explicit HpackDecoder(std::size_t max_table_size = 4096)
      : max_table_size_(max_table_size), capacity_(max_table_size) {}

  // Decodes one whole header block (a HEADERS frame and its CONTINUATIONs) into OUT. False with
  // ERROR on any decoding error, after which the connection must end (RFC 9113 §4.3:
  // COMPRESSION_ERROR), since the dynamic table no longer matches the encoder's.
  bool Decode(std::string_view block, HeaderList& out, std::string& error);

  // The dynamic table's entries, newest first, and its size in RFC 7541 §4.1's units.
  const std::deque<HeaderField>& dynamic_table() const { return table_; }
  std::size_t table_size() const { return size_; }

 private:
  bool Lookup(std::size_t index, HeaderField& field, std::string& error) const;
  void Insert(HeaderField field);
  void Evict();

  std::size_t max_table_size_;
  std::size_t capacity_;  // the encoder's current maximum (§4.2)
  std::size_t size_ = 0;
  std::deque<HeaderField> table_;
};

// HEADERS as one header block of literal fields without indexing (RFC 7541 §6.2.2), a static
// table name (§A) by its index when there is one, strings without Huffman coding.
std::string HpackEncode(const HeaderList& headers);

}  // namespace dxshim::test::node_standin
