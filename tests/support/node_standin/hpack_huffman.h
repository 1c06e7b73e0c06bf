// HPACK's Huffman code (RFC 7541 §5.2 and Appendix B): decoding the strings a peer's encoder
// chose to Huffman-code (grpc C++ and grpc-go code most header values).
#pragma once

#include <string>
#include <string_view>

namespace dxshim::test::node_standin {

// Appends the decoded octets of CODED to OUT; false (OUT unspecified) when CODED holds the EOS
// symbol, or ends in padding longer than 7 bits or not made of the EOS code's leading 1 bits
// (RFC 7541 §5.2: each a decoding error).
bool HuffmanDecode(std::string_view coded, std::string& out);

// The Huffman coding of TEXT (for the codec's own tests: the stand-ins send literal strings).
std::string HuffmanEncode(std::string_view text);

}  // namespace dxshim::test::node_standin
