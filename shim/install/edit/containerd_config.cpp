#include "shim/install/edit/containerd_config.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "shim/base/json_text.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/toml_scan.h"
#include "shim/install/edit/yaml_text.h"

namespace dxshim::install {
namespace {

constexpr std::string_view kKind = "containerd config.toml";
const TomlKeyPath kAddress = {"address"};
const TomlKeyPath kVersion = {"version"};

// The table the address is read from in this config version (see the header).
TomlKeyPath TableOf(int version, ContainerdServer server) {
  const bool grpc = server == ContainerdServer::kGrpc;
  if (version >= 4) {
    return {"plugins", grpc ? "io.containerd.server.v1.grpc" : "io.containerd.server.v1.ttrpc"};
  }
  return {grpc ? "grpc" : "ttrpc"};
}

// How the table is written in a header and in messages: [grpc], [plugins.'io...grpc'].
std::string Dotted(const TomlKeyPath& table) {
  return table.size() == 1 ? table[0] : table[0] + ".'" + table[1] + "'";
}
std::string Header(const TomlKeyPath& table) { return "[" + Dotted(table) + "]"; }

bool StartsWith(const TomlKeyPath& path, const TomlKeyPath& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

TomlKeyPath Joined(const TomlKeyPath& table, const TomlKeyPath& key) {
  TomlKeyPath out = table;
  out.insert(out.end(), key.begin(), key.end());
  return out;
}

int VersionOf(std::string_view toml, const TomlScan& scan) {
  for (const TomlEntry& entry : scan.entries) {
    if (!entry.table.empty() || entry.key != kVersion) continue;
    const std::string_view raw =
        toml.substr(entry.value_begin, entry.value_end - entry.value_begin);
    if (raw.empty() || raw.size() > 3 ||
        !std::all_of(raw.begin(), raw.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      FailTomlAt(toml, kKind, entry.value_begin, "version is not a whole number");
    }
    return std::stoi(std::string(raw));
  }
  return 1;
}

struct Found {
  TomlScan scan;
  TomlKeyPath table;                         // where the address lives for this file's version
  std::optional<std::size_t> header_index;   // the table's header in scan.headers
  std::optional<std::size_t> address_index;  // its address in scan.entries
  const TomlHeader* header() const { return header_index ? &scan.headers[*header_index] : nullptr; }
  const TomlEntry* address() const {
    return address_index ? &scan.entries[*address_index] : nullptr;
  }
};

// Reads the file and finds the server's table and address, refusing the forms it cannot edit.
Found Find(std::string_view toml, ContainerdServer server) {
  Found found;
  found.scan = ScanToml(toml, kKind);
  found.table = TableOf(VersionOf(toml, found.scan), server);
  const std::string name = Header(found.table);
  for (std::size_t i = 0; i < found.scan.headers.size(); ++i) {
    const TomlHeader& header = found.scan.headers[i];
    if (header.name != found.table) continue;
    if (header.array) FailTomlAt(toml, kKind, header.line_begin, name + " is an array of tables");
    if (found.header_index) {
      FailTomlAt(toml, kKind, header.line_begin, name + " is defined a second time");
    }
    found.header_index = i;
  }
  const std::string dotted = Dotted(found.table);
  for (std::size_t i = 0; i < found.scan.entries.size(); ++i) {
    const TomlEntry& entry = found.scan.entries[i];
    const TomlKeyPath full = Joined(entry.table, entry.key);
    if (!StartsWith(full, found.table) || StartsWith(entry.table, found.table)) {
      // Not the table, or a key inside it (looked at below).
      if (entry.table != found.table || entry.key.empty() || entry.key[0] != "address") continue;
      if (entry.key != kAddress) {
        FailTomlAt(toml, kKind, entry.key_begin, name + " address has dotted parts");
      }
      if (found.address_index) {
        FailTomlAt(toml, kKind, entry.key_begin, name + " address is set a second time");
      }
      found.address_index = i;
      continue;
    }
    // The table written as a key of a parent table: grpc.address = ..., grpc = {...}.
    std::string why = dotted;
    why += full.size() > found.table.size() ? " is set by a dotted key"
                                            : " is set as a value (an inline table?)";
    why += "; dxshim edits a ";
    why += name;
    why += " table only";
    FailTomlAt(toml, kKind, entry.key_begin, why);
  }
  return found;
}

std::string DecodeAddress(std::string_view toml, const Found& found) {
  const TomlEntry& address = *found.address();
  const std::string_view value =
      toml.substr(address.value_begin, address.value_end - address.value_begin);
  const std::string name = Header(found.table);
  if (value.substr(0, 3) == "\"\"\"" || value.substr(0, 3) == "'''") {
    FailTomlAt(toml, kKind, address.value_begin,
               name + " address is a multi-line string; dxshim reads one-line strings only");
  }
  if (value.empty() || (value[0] != '"' && value[0] != '\'')) {
    FailTomlAt(toml, kKind, address.value_begin, name + " address is not a string");
  }
  return ReadTomlString(toml, address.value_begin, kKind);
}

// A TOML basic string: JSON's escapes (\", \\, \n, \uXXXX, ...) are TOML's too.
std::string BasicString(std::string_view value) { return JsonString(value); }

bool LiteralCarries(std::string_view value) {
  return std::none_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == '\'' || (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

std::string IndentOf(std::string_view toml, const TomlEntry& entry) {
  const std::string_view indent = toml.substr(entry.line_begin, entry.key_begin - entry.line_begin);
  return indent.find_first_not_of(" \t") == std::string_view::npos ? std::string(indent) : "";
}

// Every key but the address, with its raw value, for the self-check.
std::vector<std::string> OtherKeys(std::string_view toml, const Found& found) {
  std::vector<std::string> keys;
  for (const TomlEntry& entry : found.scan.entries) {
    if (entry.table == found.table && entry.key == kAddress) continue;
    std::string line;
    for (const std::string& part : entry.table) line += "[" + part + "]";
    for (const std::string& part : entry.key) line += "." + part;
    line += " = ";
    line += toml.substr(entry.value_begin, entry.value_end - entry.value_begin);
    keys.push_back(std::move(line));
  }
  return keys;
}

// `address = ...` added to the file: after the table's header, or as a new table at the end.
std::string Inserted(std::string_view toml, const Found& found, std::string_view pipe_path) {
  const std::string eol = LineEnding(toml);
  const std::string line = "address = " + BasicString(pipe_path);
  std::string indent;
  bool indent_found = false;
  for (const TomlEntry& entry : found.scan.entries) {
    if (!entry.table.empty() && (entry.table == found.table || !indent_found)) {
      indent = IndentOf(toml, entry);
      indent_found = true;
      if (entry.table == found.table) break;
    }
  }
  std::string out;
  if (const TomlHeader* header = found.header()) {
    out = std::string(toml.substr(0, header->next_line));
    if (!header->has_line_break) out += eol;
    out += indent + line;
    if (header->has_line_break) out += eol;
    out.append(toml.substr(header->next_line));
    return out;
  }
  out = std::string(toml);
  const std::size_t bom = toml.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  if (out.size() > bom) {
    if (out.back() != '\n') out += eol;
    const std::size_t last = out.size() - eol.size();
    if (last < eol.size() || out.substr(last - eol.size(), eol.size()) != eol) out += eol;
  }
  return out + Header(found.table) + eol + indent + line + eol;
}

}  // namespace

int ContainerdConfigVersion(std::string_view toml) {
  return VersionOf(toml, ScanToml(toml, kKind));
}

std::optional<std::string> ReadServerAddress(std::string_view toml, ContainerdServer server) {
  const Found found = Find(toml, server);
  if (!found.address()) return std::nullopt;
  return DecodeAddress(toml, found);
}

std::string SetServerAddress(std::string_view toml, ContainerdServer server,
                             std::string_view pipe_path) {
  const Found found = Find(toml, server);
  std::string out;
  if (found.address()) {
    const TomlEntry& address = *found.address();
    if (DecodeAddress(toml, found) == pipe_path) return std::string(toml);
    const bool literal = toml[address.value_begin] == '\'' && LiteralCarries(pipe_path);
    out = std::string(toml.substr(0, address.value_begin));
    out += literal ? "'" + std::string(pipe_path) + "'" : BasicString(pipe_path);
    out.append(toml.substr(address.value_end));
  } else {
    out = Inserted(toml, found, pipe_path);
  }

  // The self-check: the address reads `pipe_path`, every other key as before.
  const std::string failed =
      std::string(kKind) + ": setting " + Header(found.table) + " address would ";
  Found after;
  try {
    after = Find(out, server);
  } catch (const EditError& error) {
    throw EditError(failed + "break the file (" + error.what() + "); not written");
  }
  if (!after.address() || DecodeAddress(out, after) != pipe_path) {
    throw EditError(failed + "not read back as the path set; not written");
  }
  if (OtherKeys(out, after) != OtherKeys(toml, found)) {
    throw EditError(failed + "change other keys; not written");
  }
  return out;
}

ContainerdPipes ServedPipes(std::string_view toml) {
  ContainerdPipes pipes;
  const auto grpc = ReadServerAddress(toml, ContainerdServer::kGrpc);
  pipes.grpc = grpc && !grpc->empty() ? *grpc : std::string(kContainerdDefaultPipe);
  const auto ttrpc = ReadServerAddress(toml, ContainerdServer::kTtrpc);
  if (ttrpc && !ttrpc->empty()) {
    pipes.ttrpc = *ttrpc;
  } else {
    // Before version 4 TTRPC follows the gRPC address; from version 4 on it has its own default.
    pipes.ttrpc =
        (ContainerdConfigVersion(toml) >= 4 ? std::string(kContainerdDefaultPipe) : pipes.grpc) +
        ".ttrpc";
  }
  return pipes;
}

std::string MoveGrpcKeepTtrpc(std::string_view toml, std::string_view moved) {
  const std::string pinned =
      SetServerAddress(toml, ContainerdServer::kTtrpc, ServedPipes(toml).ttrpc);
  return SetServerAddress(pinned, ContainerdServer::kGrpc, moved);
}

}  // namespace dxshim::install
