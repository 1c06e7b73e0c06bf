// containerd's config.toml on Windows: the address of its gRPC endpoint (default
// \\.\pipe\containerd-containerd), `address` in the top-level [grpc] table for config versions
// 2 (containerd 1.7) and 3 (2.0-2.2), in [plugins.'io.containerd.server.v1.grpc'] for version 4
// (2.3+, where a top-level [grpc] is only migrated from older versions). "[grpc]" below means
// that table. In TOML the pipe path is written as a basic string with escaped
// backslashes, address = "\\\\.\\pipe\\containerd-containerd", or as a literal string,
// address = '\\.\pipe\containerd-containerd'. A minimal TOML reader (tables [x] / [x.y], arrays of
// tables, `key = value` with every TOML value form, comments) finds it; what it cannot read
// safely is refused, naming the line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dxshim::node {

// containerd's [grpc] address on Windows when its config sets none.
inline constexpr std::string_view kContainerdDefaultPipe = R"(\\.\pipe\containerd-containerd)";

// The [grpc] address as the pipe path it names (escapes decoded), nullopt when the file sets none
// (containerd then uses its default). Throws EditError (naming the line) when the file cannot be
// read, the address is not a one-line string, [grpc] or its address is there twice, or grpc is
// set by a dotted key (grpc.address = ...) or an inline table (grpc = {...}) at the top level.
std::optional<std::string> ReadGrpcAddress(std::string_view toml);

// The file with [grpc] address set to `pipe_path` (a basic string with escaped backslashes, or a
// literal string when that is what is there and it can carry the path): replaced in place
// (unchanged when already so); or `address = "..."` inserted as the first key after an existing
// [grpc] header (at the indentation of the table's other keys); or a [grpc] table with it
// appended at the end (after a blank line; the key indented as the file's other tables' keys).
// The file's line endings are kept. Self-checked by reading the result again: the address reads
// `pipe_path` and every other key reads as before, else EditError.
std::string SetGrpcAddress(std::string_view toml, std::string_view pipe_path);

}  // namespace dxshim::node
