// libFuzzer target: the installer's edits of containerd's config.toml
// (shim/install/edit/containerd_config.h) and the TOML reader under them
// (shim/install/edit/toml_scan.h). The input is a pipe path (first line) and the file (the rest).
// Properties:
//   - ScanToml, ContainerdConfigVersion, ReadServerAddress, ServedPipes, SetServerAddress and
//     MoveGrpcKeepTtrpc refuse only with EditError; ScanToml's offsets lie in the text in order;
//   - re-read: after SetServerAddress the server's address reads the path; after
//     MoveGrpcKeepTtrpc containerd serves gRPC on the path (its default pipe when the path is
//     empty) and TTRPC on the pipe it served before;
//   - idempotence: either edit applied to its result changes nothing;
//   - bytes outside the setting: SetServerAddress of a present address replaces bytes within that
//     address's value only; of an absent one it only inserts text (no byte of the input changes);
//     the other server's address and every other key read as before (ScanToml's raw values).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shim/install/edit/command_line.h"
#include "shim/install/edit/containerd_config.h"
#include "shim/install/edit/toml_scan.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace install = dxshim::install;
using dxshim::fuzz::Changed;
using dxshim::fuzz::ChangedSpan;
using dxshim::fuzz::Check;
using install::ContainerdServer;

// Every key's table, name and raw value but `skip` (the entry at that index), in order.
std::vector<std::string> Keys(const std::string& text, const install::TomlScan& scan,
                              std::optional<std::size_t> skip) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < scan.entries.size(); ++i) {
    if (skip == i) continue;
    const auto& entry = scan.entries[i];
    std::string line;
    for (const auto& part : entry.table) line += "[" + part + "]";
    for (const auto& part : entry.key) line += "." + part;
    keys.push_back(line + "=" +
                   text.substr(entry.value_begin, entry.value_end - entry.value_begin));
  }
  return keys;
}

// The entry that SetServerAddress edits: `address` in the table of the file's version.
std::optional<std::size_t> AddressEntry(const std::string& text, const install::TomlScan& scan,
                                        ContainerdServer server) {
  const bool grpc = server == ContainerdServer::kGrpc;
  const install::TomlKeyPath table =
      install::ContainerdConfigVersion(text) >= 4
          ? install::TomlKeyPath{"plugins", grpc ? "io.containerd.server.v1.grpc"
                                                 : "io.containerd.server.v1.ttrpc"}
          : install::TomlKeyPath{grpc ? "grpc" : "ttrpc"};
  for (std::size_t i = 0; i < scan.entries.size(); ++i) {
    if (scan.entries[i].table == table && scan.entries[i].key == install::TomlKeyPath{"address"}) {
      return i;
    }
  }
  return std::nullopt;
}

void CheckScan(const std::string& text) {
  install::TomlScan scan;
  try {
    scan = install::ScanToml(text, "fuzz");
  } catch (const install::EditError&) {
    return;
  }
  std::size_t at = 0;
  for (const auto& entry : scan.entries) {
    Check(entry.line_begin >= at && entry.line_begin <= entry.key_begin &&
              entry.key_begin < entry.value_begin && entry.value_begin <= entry.value_end &&
              entry.value_end <= text.size(),
          "ScanToml's entries lie in the text in order");
    at = entry.value_end;
  }
  for (const auto& header : scan.headers) {
    Check(header.line_begin < header.next_line && header.next_line <= text.size(),
          "ScanToml's headers lie in the text");
  }
}

// The address as read, or a mark that the file cannot be read for that server.
std::optional<std::string> ReadOrMark(const std::string& text, ContainerdServer server) {
  try {
    return install::ReadServerAddress(text, server);
  } catch (const install::EditError&) {
    return "\x01(cannot be read)";
  }
}

void CheckSet(const std::string& text, ContainerdServer server, const std::string& pipe) {
  const ContainerdServer other =
      server == ContainerdServer::kGrpc ? ContainerdServer::kTtrpc : ContainerdServer::kGrpc;
  std::string out;
  try {
    out = install::SetServerAddress(text, server, pipe);
  } catch (const install::EditError&) {
    return;
  }
  Check(install::ReadServerAddress(out, server) == pipe, "the address reads the path set");
  Check(install::SetServerAddress(out, server, pipe) == out, "setting it again changes nothing");
  Check(ReadOrMark(out, other) == ReadOrMark(text, other), "the other server's address stays");
  const auto before = install::ScanToml(text, "fuzz");
  const auto after = install::ScanToml(out, "fuzz");
  const auto address = AddressEntry(text, before, server);
  Check(Keys(out, after, AddressEntry(out, after, server)) == Keys(text, before, address),
        "every other key reads as before");
  if (out == text) return;  // the address already read the path: no byte changed at all
  const Changed changed = ChangedSpan(text, out);
  if (address) {
    const auto& entry = before.entries[*address];
    Check(changed.begin >= entry.value_begin && changed.end <= entry.value_end,
          "a present address: only its value's bytes change");
  } else {
    Check(changed.begin == changed.end, "an absent address: text is inserted, none replaced");
  }
}

void CheckMove(const std::string& text, const std::string& pipe) {
  std::string out;
  try {
    out = install::MoveGrpcKeepTtrpc(text, pipe);
  } catch (const install::EditError&) {
    return;
  }
  const auto was = install::ServedPipes(text);
  const auto now = install::ServedPipes(out);
  Check(now.grpc == (pipe.empty() ? std::string(install::kContainerdDefaultPipe) : pipe),
        "gRPC moves to the path");
  Check(now.ttrpc == was.ttrpc, "TTRPC stays where it was");
  Check(install::MoveGrpcKeepTtrpc(out, pipe) == out, "moving again changes nothing");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = dxshim::fuzz::LeadingLines<1>(data, size);
  if (!input) return 0;
  const auto& [pipe, text] = *input;
  CheckScan(text);
  try {
    (void)install::ContainerdConfigVersion(text);
    (void)install::ServedPipes(text);
  } catch (const install::EditError&) {
  }
  CheckSet(text, ContainerdServer::kGrpc, pipe);
  CheckSet(text, ContainerdServer::kTtrpc, pipe);
  CheckMove(text, pipe);
  return 0;
}
