#!/usr/bin/python3
"""Writes hpack_vectors.txt: header blocks made by Debian's python3-hpack (an HPACK encoder
independent of the stand-ins' decoder, hpack.cpp), with the header lists they decode to and the
dynamic table's size after each, and malformed blocks that python3-hpack's decoder refuses.
hpack_test.cpp decodes every block with the stand-ins' decoder and compares.

usage: /usr/bin/python3 hpack_vectors.py > hpack_vectors.txt   (apt-get install python3-hpack)
"""
import random

import hpack
from hpack import Decoder, Encoder, NeverIndexedHeaderTuple

random.seed(48)  # the same vectors at every run


def connection(name, header_lists, huffman=True, table_sizes=None):
    """One encoder and one decoder over several header blocks, as on one HTTP/2 connection.
    table_sizes[i], when given, is the encoder's table size set before block i (a dynamic table
    size update at the block's start, RFC 7541 §6.3)."""
    encoder, decoder = Encoder(), Decoder(max_header_list_size=1 << 20)
    print(f"connection {name}")
    for i, headers in enumerate(header_lists):
        if table_sizes and table_sizes[i] is not None:
            encoder.header_table_size = table_sizes[i]
        block = encoder.encode(headers, huffman=huffman)
        decoded = decoder.decode(block, raw=True)
        print(f"block {block.hex()}")
        for field_name, value in decoded:
            print(f"field {field_name.hex()} {value.hex()}")
        print(f"table {decoder.header_table._current_size}")
    print("end")


def grpc_call(path, timeout):
    # The fields grpc C++ 1.51 sends for a unary call (its user agent), and a secret as a
    # never-indexed field.
    return [(":scheme", "http"), (":method", "POST"), (":path", path),
            (":authority", "localhost"), ("grpc-timeout", timeout), ("te", "trailers"),
            ("content-type", "application/grpc"),
            ("user-agent", "grpc-c++/1.51.1 grpc-c/29.0.0 (windows; chttp2)"),
            ("grpc-accept-encoding", "identity, deflate, gzip"),
            ("containerd-namespace", "k8s.io"),
            NeverIndexedHeaderTuple("authorization", "Bearer y235.wef315yfh138vh31hv93hv8h3v")]


def random_text(length):
    return bytes(random.randrange(256) for _ in range(length))


print(f"# Made by hpack_vectors.py with python3-hpack {hpack.__version__}; do not edit.")
print("# connection NAME, then per block: block HEX, field NAME-HEX VALUE-HEX..., table SIZE;")
print("# end. bad NAME HEX: a block a fresh decoder must refuse.")

# RFC 7541 Appendix C.3/C.4's requests and C.5/C.6's responses (a 256-octet table: evictions).
requests = [
    [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")],
    [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com"),
     ("cache-control", "no-cache")],
    [(":method", "GET"), (":scheme", "https"), (":path", "/index.html"),
     (":authority", "www.example.com"), ("custom-key", "custom-value")],
]
responses = [
    [(":status", "302"), ("cache-control", "private"),
     ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("location", "https://www.example.com")],
    [(":status", "307"), ("cache-control", "private"),
     ("date", "Mon, 21 Oct 2013 20:13:21 GMT"), ("location", "https://www.example.com")],
    [(":status", "200"), ("cache-control", "private"),
     ("date", "Mon, 21 Oct 2013 20:13:22 GMT"), ("location", "https://www.example.com"),
     ("content-encoding", "gzip"),
     ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1")],
]
connection("rfc7541-c3-requests-plain", requests, huffman=False)
connection("rfc7541-c4-requests-huffman", requests)
connection("rfc7541-c5-responses-plain-256", responses, huffman=False, table_sizes=[256, None, None])
connection("rfc7541-c6-responses-huffman-256", responses, table_sizes=[256, None, None])

# Unary calls as a gRPC client sends them on one connection: the second on, mostly indexed.
calls = [grpc_call(f"/runtime.v1.RuntimeService/{m}", f"{t}m")
         for m, t in [("Version", 1999), ("Version", 1998), ("ListPodSandbox", 119999),
                      ("Version", 2000), ("ListContainers", 120000)]]
connection("grpc-unary-calls", calls)
# The table shrunk to 0 (emptied), then back: size updates at the start of blocks.
connection("grpc-table-resized", calls[:4], table_sizes=[None, 0, 4096, 1024])
# Any octets in values, names of every length, and strings over the one- and two-octet integer
# prefixes (lengths of 127 and more, of 16384 and more), evicting as they go.
random_lists = []
for n in range(24):
    fields = []
    for _ in range(random.randrange(1, 6)):
        name = "x-" + "".join(random.choice("abcdefghijklmnopqrstuvwxyz0123456789-_.")
                              for _ in range(random.randrange(1, 40)))
        length = random.choice([0, 1, 5, 126, 127, 128, 300])
        fields.append((name.encode(), random_text(length)))
    random_lists.append(fields)
random_lists[12].append((b"x-large", random_text(16400)))
connection("random-octets-huffman", random_lists)
connection("random-octets-plain", random_lists[:12], huffman=False)

# Malformed blocks (RFC 7541's decoding errors), each one refused by python3-hpack too.
bad = {
    "index-0": "80",
    "index-past-dynamic-table": "be",  # 62, with the dynamic table empty
    # Literals without indexing named "a" (0001 61) whose Huffman-coded value is broken:
    "huffman-eos": "00016184ffffffff",  # 32 one-bits: the 30-bit EOS code inside
    "huffman-padding-over-7-bits": "000161821fff",  # "a" (00011) then 11 one-bits
    "huffman-padding-not-ones": "0001618118",  # "a" then 000
    "size-update-over-max": "3fe21f",  # 4097 > 4096
    "integer-overflow": "0fffffffffffffffff7f",
    "string-past-end": "000561",
    "name-index-past-table": "7e0130",  # a literal naming index 62 of an empty dynamic table
}
for name, block in bad.items():
    try:
        Decoder().decode(bytes.fromhex(block))
    except Exception:  # refused, as it must be
        print(f"bad {name} {block}")
    else:
        raise SystemExit(f"python3-hpack accepts the malformed block {name}: {block}")
