// The stand-ins' HPACK decoder (hpack.h) decodes every header block that Debian's python3-hpack
// encoded (hpack_vectors.txt, made by hpack_vectors.py: RFC 7541 Appendix C's requests and
// responses with and without Huffman coding and with a 256-octet table that evicts, gRPC unary
// calls on one connection indexed from its dynamic table, table size updates down to 0 and back,
// never-indexed fields, random octets with string lengths over the one- and two-octet integer
// prefixes) to the same header lists, leaving its dynamic table the same size, and refuses every
// malformed block python3-hpack refuses; its Huffman code round-trips every octet, and the
// literal-only encoder's blocks decode to what was encoded.
#include "tests/support/node_standin/hpack.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/node_standin/hpack_huffman.h"

namespace dxshim::test::node_standin {
namespace {

std::string Unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

struct Block {
  std::string bytes;
  HeaderList fields;
  std::size_t table_size = 0;
};
struct VectorConnection {
  std::string name;
  std::vector<Block> blocks;
};
struct Vectors {
  std::vector<VectorConnection> connections;
  std::vector<std::pair<std::string, std::string>> bad;  // name, block
};

Vectors ReadVectors() {
  std::ifstream file(std::string(NODE_STANDIN_DIR) + "/hpack_vectors.txt");
  Vectors vectors;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "connection") {
      vectors.connections.emplace_back();
      words >> vectors.connections.back().name;
    } else if (kind == "block") {
      std::string hex;
      words >> hex;
      vectors.connections.back().blocks.push_back(Block{Unhex(hex), {}, 0});
    } else if (kind == "field") {
      std::string name;
      std::string value;
      words >> name >> value;
      vectors.connections.back().blocks.back().fields.push_back({Unhex(name), Unhex(value)});
    } else if (kind == "table") {
      words >> vectors.connections.back().blocks.back().table_size;
    } else if (kind == "bad") {
      std::string name;
      std::string hex;
      words >> name >> hex;
      vectors.bad.emplace_back(name, Unhex(hex));
    }
  }
  return vectors;
}

TEST(HpackDecoder, DecodesWhatPythonHpackEncoded) {
  const Vectors vectors = ReadVectors();
  ASSERT_EQ(vectors.connections.size(), 8u) << "hpack_vectors.txt is missing or incomplete";
  std::size_t blocks = 0;
  for (const auto& connection : vectors.connections) {
    HpackDecoder decoder;
    for (std::size_t i = 0; i < connection.blocks.size(); ++i) {
      const Block& block = connection.blocks[i];
      HeaderList decoded;
      std::string error;
      ASSERT_TRUE(decoder.Decode(block.bytes, decoded, error))
          << connection.name << " block " << i << ": " << error;
      EXPECT_EQ(decoded, block.fields) << connection.name << " block " << i;
      EXPECT_EQ(decoder.table_size(), block.table_size) << connection.name << " block " << i;
      ++blocks;
    }
  }
  EXPECT_GE(blocks, 50u);
}

TEST(HpackDecoder, LaterGrpcCallsComeFromTheDynamicTable) {
  // The vectors exercise the dynamic table only if a later call's block is mostly indexes.
  const Vectors vectors = ReadVectors();
  for (const auto& connection : vectors.connections) {
    if (connection.name != "grpc-unary-calls") continue;
    ASSERT_GE(connection.blocks.size(), 2u);
    EXPECT_LT(connection.blocks[1].bytes.size() * 3, connection.blocks[0].bytes.size());
    return;
  }
  FAIL() << "no grpc-unary-calls connection in hpack_vectors.txt";
}

TEST(HpackDecoder, RefusesWhatPythonHpackRefuses) {
  // Each for its own reason (a block refused for another one would prove nothing).
  const std::map<std::string, std::string> reasons = {
      {"index-0", "index 0"},
      {"index-past-dynamic-table", "past the dynamic table"},
      {"huffman-eos", "Huffman"},
      {"huffman-padding-over-7-bits", "Huffman"},
      {"huffman-padding-not-ones", "Huffman"},
      {"size-update-over-max", "over 4096"},
      {"integer-overflow", "malformed"},
      {"string-past-end", "past the block's end"},
      {"name-index-past-table", "name: index 62"}};
  const Vectors vectors = ReadVectors();
  ASSERT_EQ(vectors.bad.size(), reasons.size());
  for (const auto& [name, block] : vectors.bad) {
    HpackDecoder decoder;
    HeaderList decoded;
    std::string error;
    EXPECT_FALSE(decoder.Decode(block, decoded, error)) << name;
    ASSERT_TRUE(reasons.count(name)) << name;
    EXPECT_NE(error.find(reasons.at(name)), std::string::npos) << name << ": " << error;
  }
}

TEST(HpackDecoder, RefusesATableSizeUpdateAfterAField) {
  // RFC 7541 §4.2: the update comes at the start of the block (":method GET", then an update).
  HpackDecoder decoder;
  HeaderList decoded;
  std::string error;
  EXPECT_FALSE(decoder.Decode(std::string("\x82\x20", 2), decoded, error));
  EXPECT_NE(error.find("after a header field"), std::string::npos) << error;
}

TEST(HpackHuffman, EveryOctetRoundTrips) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (const std::string& text : {all, std::string("www.example.com"), std::string()}) {
    std::string decoded;
    ASSERT_TRUE(HuffmanDecode(HuffmanEncode(text), decoded));
    EXPECT_EQ(decoded, text);
  }
  // RFC 7541 C.4.1: "www.example.com" codes as f1e3 c2e5 f23a 6ba0 ab90 f4ff.
  EXPECT_EQ(HuffmanEncode("www.example.com"),
            std::string("\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff"));
}

TEST(HpackEncode, LiteralsDecodeToWhatWasEncoded) {
  const HeaderList headers = {{":status", "200"},
                              {"content-type", "application/grpc"},
                              {"grpc-message", std::string(300, 'x')},
                              {"x-custom", std::string("\0\xff", 2)}};
  HpackDecoder decoder;
  HeaderList decoded;
  std::string error;
  ASSERT_TRUE(decoder.Decode(HpackEncode(headers), decoded, error)) << error;
  EXPECT_EQ(decoded, headers);
  EXPECT_EQ(decoder.table_size(), 0u);  // without indexing: the peer's table is left alone
}

}  // namespace
}  // namespace dxshim::test::node_standin
