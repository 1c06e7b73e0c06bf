#include "shim/node/install_record.h"

#include <yaml-cpp/yaml.h>

#include <array>

#include "shim/base/json_text.h"
#include "shim/node/yaml_text.h"

namespace dxshim::node {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr int kVersion = 1;

unsigned Byte(char c) { return static_cast<unsigned char>(c); }

std::string Base64(const std::string& bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t left = bytes.size() - i;
    unsigned n = Byte(bytes[i]) << 16U;
    if (left > 1) n |= Byte(bytes[i + 1]) << 8U;
    if (left > 2) n |= Byte(bytes[i + 2]);
    out += kAlphabet[(n >> 18U) & 63U];
    out += kAlphabet[(n >> 12U) & 63U];
    out += left > 1 ? kAlphabet[(n >> 6U) & 63U] : '=';
    out += left > 2 ? kAlphabet[n & 63U] : '=';
  }
  return out;
}

std::string FromBase64(const std::string& text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (int i = 0; i < 64; ++i) value[static_cast<unsigned char>(kAlphabet[i])] = i;
  std::string out;
  unsigned n = 0;
  int bits = 0;
  for (const char c : text) {
    if (c == '=') break;
    const int v = value[static_cast<unsigned char>(c)];
    if (v < 0) throw NodeError("the install record holds a value that is not base64");
    n = (n << 6U | static_cast<unsigned>(v)) & 0xFFFFFFU;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((n >> static_cast<unsigned>(bits)) & 0xFFU);
    }
  }
  return out;
}

constexpr std::array<std::pair<NodeChange::Kind, const char*>, 4> kKinds{{
    {NodeChange::Kind::kFile, "file"},
    {NodeChange::Kind::kRegistry, "registry"},
    {NodeChange::Kind::kServiceCommandLine, "service-command-line"},
    {NodeChange::Kind::kServiceDependencies, "service-dependencies"},
}};

const char* KindName(NodeChange::Kind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "file";
}

std::string Field(const YAML::Node& node, const char* key) {
  if (!node[key] || !node[key].IsScalar()) {
    throw NodeError(std::string("the install record has no '") + key + "'");
  }
  return node[key].as<std::string>();
}

}  // namespace

void InstallRecord::Merge(const std::vector<NodeChange>& later) {
  for (const auto& change : later) {
    bool merged = false;
    for (auto& kept : changes) {
      if (kept.kind == change.kind && kept.target == change.target && kept.name == change.name) {
        kept.after = change.after;
        kept.why = change.why;
        merged = true;
      }
    }
    if (!merged) changes.push_back(change);
  }
}

std::string WriteInstallRecord(const InstallRecord& record) {
  std::string out = "{\n  \"version\": " + std::to_string(kVersion) + ",\n";
  out += "  \"mode\": " + JsonString(record.mode) + ",\n";
  out += "  \"launcher\": " + JsonString(record.launcher) + ",\n";
  out += "  \"restart\": " + JsonString(record.restart) + ",\n";
  out += "  \"kubeletService\": " + JsonString(record.kubelet_service) + ",\n";
  out += "  \"containerdService\": " + JsonString(record.containerd_service) + ",\n";
  out +=
      std::string("  \"createdService\": ") + (record.created_service ? "true" : "false") + ",\n";
  out += "  \"changes\": [";
  for (std::size_t i = 0; i < record.changes.size(); ++i) {
    const auto& c = record.changes[i];
    out += i ? ",\n    {" : "\n    {";
    out += "\"kind\": " + JsonString(KindName(c.kind)) + ", \"target\": " + JsonString(c.target) +
           ", \"name\": " + JsonString(c.name) + ", \"expand\": " + (c.expand ? "true" : "false") +
           ",\n     \"why\": " + JsonString(c.why) +
           ",\n     \"beforeExists\": " + (c.before ? "true" : "false") +
           ", \"before\": " + JsonString(Base64(c.before.value_or(""))) +
           ",\n     \"after\": " + JsonString(Base64(c.after)) + "}";
  }
  out += record.changes.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

InstallRecord ReadInstallRecord(const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw NodeError(std::string("the install record is not JSON: ") + e.what());
  }
  if (!root.IsMap()) throw NodeError("the install record is not a JSON object");
  if (Field(root, "version") != std::to_string(kVersion)) {
    throw NodeError("the install record has version " + Field(root, "version") + ", not " +
                    std::to_string(kVersion));
  }
  InstallRecord record;
  record.mode = Field(root, "mode");
  record.launcher = Field(root, "launcher");
  record.restart = Field(root, "restart");
  record.kubelet_service = Field(root, "kubeletService");
  record.containerd_service = Field(root, "containerdService");
  record.created_service = Field(root, "createdService") == "true";
  if (!root["changes"] || !root["changes"].IsSequence()) {
    throw NodeError("the install record has no list of changes");
  }
  for (const auto& item : root["changes"]) {
    NodeChange change;
    const std::string kind = Field(item, "kind");
    bool known = false;
    for (const auto& [k, name] : kKinds) {
      if (kind == name) {
        change.kind = k;
        known = true;
      }
    }
    if (!known) throw NodeError("the install record has a change of unknown kind '" + kind + "'");
    change.target = Field(item, "target");
    change.name = Field(item, "name");
    change.expand = Field(item, "expand") == "true";
    change.why = Field(item, "why");
    if (Field(item, "beforeExists") == "true") change.before = FromBase64(Field(item, "before"));
    change.after = FromBase64(Field(item, "after"));
    record.changes.push_back(std::move(change));
  }
  return record;
}

}  // namespace dxshim::node
