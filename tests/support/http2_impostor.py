#!/usr/bin/env python3
"""A local process that sends a gRPC call's first bytes to a loopback port it has no business
with: the HTTP/2 client preface, an empty SETTINGS frame, and a HEADERS frame (END_STREAM,
END_HEADERS) for `method`, its header block in HPACK literals without indexing (RFC 7541 6.2.2).
Then it reads what comes back until the connection ends or 5 s pass, and prints one JSON line:
  {"port": P, "received": N, "first": "hex of the first 32 bytes",
   "ended": "eof"|"reset"|"timeout"|"refused" (nothing listened),
   "http2_settings": true when the answer starts with an HTTP/2 SETTINGS frame}
A gRPC server sends its SETTINGS frame as soon as it has a connection, so http2_settings says
that gRPC's HTTP/2 parser took the connection. The tests run it as `nobody` (setpriv).

usage: http2_impostor.py PORT [METHOD]"""
import json
import socket
import sys


def literal(name, value):
    # Literal header field without indexing, new name (0x00), lengths under 127 (no Huffman).
    n, v = name.encode(), value.encode()
    return bytes([0, len(n)]) + n + bytes([len(v)]) + v


def frame(kind, flags, stream, payload):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


port = int(sys.argv[1])
method = sys.argv[2] if len(sys.argv) > 2 else "/runtime.v1.RuntimeService/Version"
headers = b"".join(literal(n, v) for n, v in [
    (":method", "POST"), (":scheme", "http"), (":path", method),
    (":authority", "127.0.0.1:%d" % port), ("content-type", "application/grpc"),
    ("te", "trailers")])
hello = (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") +
         frame(1, 0x4 | 0x1, 1, headers))
received, ended = b"", "timeout"
try:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(hello)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                ended = "eof"
                break
            received += chunk
except ConnectionRefusedError:  # nothing listens there (any more): no parser took the bytes
    ended = "refused"
except socket.timeout:
    ended = "timeout"
except (ConnectionResetError, BrokenPipeError):
    ended = "reset"
settings = len(received) >= 9 and received[3] == 4 and received[5:9] == b"\0\0\0\0"
print(json.dumps({"port": port, "received": len(received), "first": received[:32].hex(),
                  "ended": ended, "http2_settings": settings}))
