#include "shim/install/install_journal.h"

#include <yaml-cpp/yaml.h>

#include <array>

#include "shim/base/comma_list.h"
#include "shim/base/json_text.h"

namespace dxshim::install {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// 1: the record alone (dxshim before the journal); 2: the record and the procedure in progress.
constexpr int kVersion = 2;

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
    if (v < 0) throw NodeError("the install journal holds a value that is not base64");
    n = (n << 6U | static_cast<unsigned>(v)) & 0xFFFFFFU;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((n >> static_cast<unsigned>(bits)) & 0xFFU);
    }
  }
  return out;
}

// A name for each value of an enum, both ways.
template <typename E, std::size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return names[0].second;
}
template <typename E, std::size_t N>
E ValueOf(const std::array<std::pair<E, std::string_view>, N>& names, const std::string& name,
          const char* what) {
  for (const auto& [v, n] : names) {
    if (name == n) return v;
  }
  throw NodeError(std::string("the install journal has an unknown ") + what + " '" + name + "'");
}

constexpr std::array<std::pair<NodeChange::Kind, std::string_view>, 4> kChangeKinds{{
    {NodeChange::Kind::kFile, "file"},
    {NodeChange::Kind::kRegistry, "registry"},
    {NodeChange::Kind::kServiceCommandLine, "service-command-line"},
    {NodeChange::Kind::kServiceDependencies, "service-dependencies"},
}};
constexpr std::array<std::pair<Step::State, std::string_view>, 3> kStates{{
    {Step::State::kPending, "pending"},
    {Step::State::kBegun, "begun"},
    {Step::State::kDone, "done"},
}};
constexpr std::array<std::pair<Procedure::Kind, std::string_view>, 3> kProcedures{{
    {Procedure::Kind::kInstall, "install"},
    {Procedure::Kind::kRollback, "rollback"},
    {Procedure::Kind::kUninstall, "uninstall"},
}};

std::string Bool(bool b) { return b ? "true" : "false"; }

std::string ChangeJson(const NodeChange& c, const std::string& indent) {
  return "{\"kind\": " + JsonString(NameOf(kChangeKinds, c.kind)) +
         ", \"target\": " + JsonString(c.target) + ", \"name\": " + JsonString(c.name) +
         ", \"expand\": " + Bool(c.expand) + ",\n" + indent + " \"why\": " + JsonString(c.why) +
         ",\n" + indent + " \"beforeExists\": " + Bool(c.before.has_value()) +
         ", \"before\": " + JsonString(Base64(c.before.value_or(""))) + ",\n" + indent +
         " \"after\": " + JsonString(Base64(c.after)) + "}";
}

std::string ChangesJson(const std::vector<NodeChange>& changes, const std::string& indent) {
  std::string out = "[";
  for (std::size_t i = 0; i < changes.size(); ++i) {
    out += (i ? ",\n" : "\n") + indent + ChangeJson(changes[i], indent);
  }
  return out + (changes.empty() ? "]" : "\n" + indent.substr(2) + "]");
}

std::string StepJson(const Step& s) {
  std::string out = "{\"step\": " + JsonString(NameOf(kStepKindNames, s.kind)) +
                    ", \"state\": " + JsonString(NameOf(kStates, s.state)) +
                    ", \"begun\": " + std::to_string(s.begun_unix_ms) +
                    ", \"done\": " + std::to_string(s.done_unix_ms);
  if (s.remove) out += ", \"remove\": true";
  if (s.opens_window) out += ", \"opensWindow\": true";
  if (s.closes_window) out += ", \"closesWindow\": true";
  if (!s.service.empty()) out += ", \"service\": " + JsonString(s.service);
  if (!s.pipe.empty()) out += ", \"pipe\": " + JsonString(s.pipe);
  if (s.kind == Step::Kind::kWrite)
    out += ",\n       \"change\": " + ChangeJson(s.change, "       ");
  if (s.kind == Step::Kind::kCreateService) {
    const std::string dependencies = JoinList(s.spec.dependencies, ", ", JsonString);
    out += ",\n       \"spec\": {\"name\": " + JsonString(s.spec.name) +
           ", \"displayName\": " + JsonString(s.spec.display_name) +
           ", \"commandLine\": " + JsonString(s.spec.command_line) + ", \"dependencies\": [" +
           dependencies + "]}";
  }
  return out + "}";
}

std::string Field(const YAML::Node& node, const char* key) {
  if (!node[key] || !node[key].IsScalar()) {
    throw NodeError(std::string("the install journal has no '") + key + "'");
  }
  return node[key].as<std::string>();
}
std::string Optional(const YAML::Node& node, const char* key) {
  return node[key] && node[key].IsScalar() ? node[key].as<std::string>() : "";
}
std::int64_t Number(const YAML::Node& node, const char* key) {
  try {
    return std::stoll(Field(node, key));
  } catch (const std::logic_error&) {
    throw NodeError(std::string("the install journal's '") + key + "' is not a number");
  }
}

NodeChange ReadChange(const YAML::Node& item) {
  NodeChange change;
  change.kind = ValueOf(kChangeKinds, Field(item, "kind"), "change kind");
  change.target = Field(item, "target");
  change.name = Field(item, "name");
  change.expand = Field(item, "expand") == "true";
  change.why = Field(item, "why");
  if (Field(item, "beforeExists") == "true") change.before = FromBase64(Field(item, "before"));
  change.after = FromBase64(Field(item, "after"));
  return change;
}

std::vector<NodeChange> ReadChanges(const YAML::Node& list) {
  if (!list || !list.IsSequence()) throw NodeError("the install journal has no list of changes");
  std::vector<NodeChange> changes;
  for (const auto& item : list) changes.push_back(ReadChange(item));
  return changes;
}

Step ReadStep(const YAML::Node& item) {
  Step s;
  s.kind = ValueOf(kStepKindNames, Field(item, "step"), "step");
  s.state = ValueOf(kStates, Field(item, "state"), "step state");
  s.begun_unix_ms = Number(item, "begun");
  s.done_unix_ms = Number(item, "done");
  s.remove = Optional(item, "remove") == "true";
  s.opens_window = Optional(item, "opensWindow") == "true";
  s.closes_window = Optional(item, "closesWindow") == "true";
  s.service = Optional(item, "service");
  s.pipe = Optional(item, "pipe");
  if (s.kind == Step::Kind::kWrite) s.change = ReadChange(item["change"]);
  if (s.kind == Step::Kind::kCreateService) {
    const auto spec = item["spec"];
    if (!spec || !spec.IsMap()) throw NodeError("the install journal has a service without spec");
    s.spec.name = Field(spec, "name");
    s.spec.display_name = Field(spec, "displayName");
    s.spec.command_line = Field(spec, "commandLine");
    for (const auto& d : spec["dependencies"]) s.spec.dependencies.push_back(d.as<std::string>());
  }
  return s;
}

Procedure ReadProcedure(const YAML::Node& node) {
  Procedure p;
  p.kind = ValueOf(kProcedures, Field(node, "kind"), "procedure");
  p.changes = ReadChanges(node["changes"]);
  p.creates_service = Field(node, "createsService") == "true";
  if (!node["steps"] || !node["steps"].IsSequence()) {
    throw NodeError("the install journal's procedure has no steps");
  }
  for (const auto& item : node["steps"]) p.steps.push_back(ReadStep(item));
  return p;
}

}  // namespace

std::string_view ProcedureName(Procedure::Kind kind) { return NameOf(kProcedures, kind); }

void InstallJournal::Merge(const std::vector<NodeChange>& later) {
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

std::string WriteInstallJournal(const InstallJournal& j) {
  std::string out = "{\n  \"version\": " + std::to_string(kVersion) + ",\n";
  for (const auto& [key, value] : std::vector<std::pair<const char*, std::string>>{
           {"mode", j.mode},
           {"launcher", j.launcher},
           {"kubeletService", j.kubelet_service},
           {"containerdService", j.containerd_service},
           {"dxshimService", j.dxshim_service},
           {"kubeletPipeBefore", j.kubelet_pipe_before},
           {"kubeletPipe", j.kubelet_pipe},
           {"movedPipe", j.moved_pipe}}) {
    out += std::string("  \"") + key + "\": " + JsonString(value) + ",\n";
  }
  out += "  \"createdService\": " + Bool(j.created_service) + ",\n";
  out += "  \"dxshimWasRunning\": " + Bool(j.dxshim_was_running) + ",\n";
  out += "  \"changes\": " + ChangesJson(j.changes, "    ");
  if (j.procedure) {
    const Procedure& p = *j.procedure;
    out += ",\n  \"procedure\": {\n    \"kind\": " + JsonString(ProcedureName(p.kind)) +
           ",\n    \"createsService\": " + Bool(p.creates_service) +
           ",\n    \"changes\": " + ChangesJson(p.changes, "      ") + ",\n    \"steps\": [";
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      out += (i ? ",\n      " : "\n      ") + StepJson(p.steps[i]);
    }
    out += p.steps.empty() ? "]\n  }" : "\n    ]\n  }";
  }
  return out + "\n}\n";
}

InstallJournal ReadInstallJournal(const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw NodeError(std::string("the install journal is not JSON: ") + e.what());
  }
  if (!root.IsMap()) throw NodeError("the install journal is not a JSON object");
  const std::string version = Field(root, "version");
  if (version != "1" && version != std::to_string(kVersion)) {
    throw NodeError("the install journal has version " + version + ", not 1 or " +
                    std::to_string(kVersion) + " (written by a newer dxshim?)");
  }
  InstallJournal j;
  j.mode = Field(root, "mode");
  j.launcher = Field(root, "launcher");
  j.kubelet_service = Field(root, "kubeletService");
  j.containerd_service = Field(root, "containerdService");
  if (!Optional(root, "dxshimService").empty()) j.dxshim_service = Optional(root, "dxshimService");
  j.kubelet_pipe_before = Optional(root, "kubeletPipeBefore");
  j.kubelet_pipe = Optional(root, "kubeletPipe");
  j.moved_pipe = Optional(root, "movedPipe");
  j.created_service = Field(root, "createdService") == "true";
  j.dxshim_was_running = Optional(root, "dxshimWasRunning") == "true";
  j.changes = ReadChanges(root["changes"]);
  if (root["procedure"]) j.procedure = ReadProcedure(root["procedure"]);
  return j;
}

}  // namespace dxshim::install
