#include "shim/install/install_journal.h"

#include <yaml-cpp/yaml.h>

#include <array>

#include "shim/base/json_document.h"

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

// A string field, written quoted whatever it looks like.
YAML::Node Text(const std::string& s) {
  YAML::Node n(s);
  n.SetTag(kJsonStringTag);
  return n;
}

// The journal as a JSON document: the values first (names, base64), then the nodes that hold
// them.
YAML::Node ChangeNode(const NodeChange& c) {
  const std::string kind(NameOf(kChangeKinds, c.kind));
  const std::string before = Base64(c.before.value_or(""));
  const std::string after = Base64(c.after);
  YAML::Node n(YAML::NodeType::Map);
  n["kind"] = Text(kind);
  n["target"] = Text(c.target);
  n["name"] = Text(c.name);
  n["expand"] = c.expand;
  n["why"] = Text(c.why);
  n["beforeExists"] = c.before.has_value();
  n["before"] = Text(before);
  n["after"] = Text(after);
  return n;
}

YAML::Node ChangesNode(const std::vector<NodeChange>& changes) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const NodeChange& c : changes) list.push_back(ChangeNode(c));
  return list;
}

YAML::Node StepNode(const Step& s) {
  const std::string kind(NameOf(kStepKindNames, s.kind));
  const std::string state(NameOf(kStates, s.state));
  const std::optional<YAML::Node> change =
      s.kind == Step::Kind::kWrite ? std::optional(ChangeNode(s.change)) : std::nullopt;
  YAML::Node n(YAML::NodeType::Map);
  n["step"] = Text(kind);
  n["state"] = Text(state);
  // Numbers as std::to_string writes them (yaml-cpp's stream would follow the global locale).
  n["begun"] = YAML::Node(std::to_string(s.begun_unix_ms));
  n["done"] = YAML::Node(std::to_string(s.done_unix_ms));
  if (s.remove) n["remove"] = true;
  if (s.opens_window) n["opensWindow"] = true;
  if (s.closes_window) n["closesWindow"] = true;
  if (!s.service.empty()) n["service"] = Text(s.service);
  if (!s.pipe.empty()) n["pipe"] = Text(s.pipe);
  if (change) n["change"] = *change;
  if (s.kind == Step::Kind::kCreateService) {
    YAML::Node spec(YAML::NodeType::Map);
    spec["name"] = Text(s.spec.name);
    spec["displayName"] = Text(s.spec.display_name);
    spec["commandLine"] = Text(s.spec.command_line);
    YAML::Node dependencies(YAML::NodeType::Sequence);
    for (const auto& d : s.spec.dependencies) dependencies.push_back(Text(d));
    spec["dependencies"] = dependencies;
    n["spec"] = spec;
  }
  return n;
}

YAML::Node ProcedureNode(const Procedure& p) {
  const std::string kind(NameOf(kProcedures, p.kind));
  const YAML::Node changes = ChangesNode(p.changes);
  YAML::Node steps(YAML::NodeType::Sequence);
  for (const Step& s : p.steps) steps.push_back(StepNode(s));
  YAML::Node n(YAML::NodeType::Map);
  n["kind"] = Text(kind);
  n["createsService"] = p.creates_service;
  n["changes"] = changes;
  n["steps"] = steps;
  return n;
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

std::string DescribeInterrupted(const Procedure& p) {
  std::size_t done = 0;
  while (done < p.steps.size() && p.steps[done].state == Step::State::kDone) ++done;
  return "an interrupted " + std::string(ProcedureName(p.kind)) + " stopped after step " +
         std::to_string(done) + " of " + std::to_string(p.steps.size());
}

bool InstallJournal::Empty() const { return changes.empty() && !created_service && !procedure; }

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
  const YAML::Node changes = ChangesNode(j.changes);
  const std::optional<YAML::Node> procedure =
      j.procedure ? std::optional(ProcedureNode(*j.procedure)) : std::nullopt;
  YAML::Node root(YAML::NodeType::Map);
  root["version"] = YAML::Node(std::to_string(kVersion));
  for (const auto& [key, value] : std::vector<std::pair<const char*, std::string>>{
           {"mode", j.mode},
           {"launcher", j.launcher},
           {"kubeletService", j.kubelet_service},
           {"containerdService", j.containerd_service},
           {"dxshimService", j.dxshim_service},
           {"kubeletPipeBefore", j.kubelet_pipe_before},
           {"kubeletPipe", j.kubelet_pipe},
           {"movedPipe", j.moved_pipe}}) {
    root[key] = Text(value);
  }
  root["createdService"] = j.created_service;
  root["dxshimWasRunning"] = j.dxshim_was_running;
  root["changes"] = changes;
  if (procedure) root["procedure"] = *procedure;
  return EmitJson(root);
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
