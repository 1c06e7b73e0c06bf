// A connection's bytes, as the wire codecs (HTTP/2, TTRPC) read and write them: a named pipe in the
// stand-ins (pipe_stream.h), a socket pair in the codecs' own test.
#pragma once

#include <cstddef>

namespace dxshim::test::node_standin {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Exactly SIZE bytes into DATA: false at the end of the stream, on an error or a timeout.
  virtual bool ReadExact(char* data, std::size_t size) = 0;
  // All SIZE bytes of DATA: false on an error.
  virtual bool Write(const char* data, std::size_t size) = 0;
};

}  // namespace dxshim::test::node_standin
