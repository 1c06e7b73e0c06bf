// containerd's config.toml on Windows: where its two servers listen, gRPC (the CRI and every
// other API, default \\.\pipe\containerd-containerd) and TTRPC (where the shims publish their
// events), and the takeover's edit of them. Where each address is set depends on the config version
// (containerd cmd/containerd/server/config/config.go, v1.7.34 and v2.3.4):
//   - versions 1 (no `version` key), 2 (containerd 1.x) and 3 (2.0-2.2): `address` in the top-level
//     [grpc] and [ttrpc] tables; an unset or empty TTRPC address is the gRPC address + ".ttrpc"
//     (cmd/containerd/command/main.go);
//   - version 4 (2.3+): [plugins.'io.containerd.server.v1.grpc'] and
//     [plugins.'io.containerd.server.v1.ttrpc'] (a top-level [grpc] is then not read); an unset
//     TTRPC address is the DEFAULT pipe + ".ttrpc", whatever the gRPC address
//     (cmd/containerd/server/server.go, plugins/server/ttrpc/plugin.go).
// In TOML a pipe path is a basic string with escaped backslashes,
// address = "\\\\.\\pipe\\containerd-containerd", or a literal string,
// address = '\\.\pipe\containerd-containerd'. The file is read with a minimal TOML reader
// (toml_scan.h); what it cannot read or edit safely is refused, naming the line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dxshim::install {

// containerd's gRPC address on Windows when its config sets none (defaults/defaults_windows.go).
inline constexpr std::string_view kContainerdDefaultPipe = R"(\\.\pipe\containerd-containerd)";

enum class ContainerdServer { kGrpc, kTtrpc };

// The `version` key (no key: 1).
int ContainerdConfigVersion(std::string_view toml);

// The server's `address` in the table this file's version reads it from, escapes decoded; nullopt
// when the file sets none. Throws EditError (naming the line) when the file cannot be read, the
// address is not a one-line string, the table or its address is there twice, or the table is set
// by a dotted key or an inline table where dxshim could not edit it.
std::optional<std::string> ReadServerAddress(std::string_view toml, ContainerdServer server);

// The file with that address set to `pipe_path` (a basic string with escaped backslashes, or a
// literal string when that is what is there and it can carry the path): replaced in place
// (unchanged when already so); or `address = "..."` inserted as the first key after an existing
// table header (at the indentation of the table's other keys); or the table appended at the end
// (after a blank line; the key indented as the file's other tables' keys). The file's line
// endings are kept. Self-checked by reading the result again: the address reads `pipe_path` and
// every other key reads as before, else EditError.
std::string SetServerAddress(std::string_view toml, ContainerdServer server,
                             std::string_view pipe_path);

// The pipes containerd serves with this file, by containerd's own rules above.
struct ContainerdPipes {
  std::string grpc;
  std::string ttrpc;
};
ContainerdPipes ServedPipes(std::string_view toml);

// The takeover's edit: the gRPC address moves to `moved`, and the TTRPC address is written out as
// the pipe it was, so that it does not follow the gRPC pipe: every shim already running publishes
// its events (a task's exit among them) to the TTRPC address it was started with, read once
// (hcsshim cmd/containerd-shim-runhcs-v1/serve.go), and containerd must go on serving it.
std::string MoveGrpcKeepTtrpc(std::string_view toml, std::string_view moved);

}  // namespace dxshim::install
