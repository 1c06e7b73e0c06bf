// Stubs for what cannot exist under wine, each saying what it stands for:
//   Import-Module (ipmo)   accepted and nothing loaded: the scripts import AKS's hns.v2.psm1 (the
//                          Host Networking Service's module), whose commands are stubbed here;
//   Add-Type -Path F       only AgentBaker's run-process.cs (it must exist and define
//                          RunProcess.exec): [RunProcess.exec]::RunProcess then starts programs
//                          (powershell_members.cpp); no C# compiler here;
//   Get-HnsNetwork, Get-HnsPolicyList, Get-HnsEndpoint
//                          one object per line of C:\k\hns-networks.txt, C:\k\hns-policylists.txt,
//                          C:\k\hns-endpoints.txt (absent: none): a network's line is its Name
//                          and optionally its Type (`azure L2Bridge`), the others' their Id;
//   Remove-HnsNetwork, Remove-HnsPolicyList, Remove-HnsEndpoint
//                          delete the object's line from that file and append `<cmdlet> <name or
//                          id>` to C:\k\hns-calls.log, so a test sees what a script removed;
//   Get-ScheduledTask      no task scheduler: no task exists (its not-found error).
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {

namespace {

constexpr const char* kHnsFolder = "C:\\k\\";

struct HnsKind {
  const char* get;
  const char* remove;
  const char* file;
  const char* key;  // the member a line gives
};

const HnsKind kHnsKinds[] = {
    {"Get-HnsNetwork", "Remove-HnsNetwork", "hns-networks.txt", "Name"},
    {"Get-HnsPolicyList", "Remove-HnsPolicyList", "hns-policylists.txt", "Id"},
    {"Get-HnsEndpoint", "Remove-HnsEndpoint", "hns-endpoints.txt", "Id"}};

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

}  // namespace

bool Interpreter::StubCmdlet(const std::string& name, Call& call) {
  const auto is = [&name](const char* cmdlet) { return EqualsNoCase(name, cmdlet); };
  if (is("Import-Module")) {
    Bind(call, {{"Name", false, 0},
                {"Force", true},
                {"DisableNameChecking", true},
                {"Global", true},
                {"Scope", false}});
    return true;
  }
  if (is("Add-Type")) {
    const Bound b = Bind(call, {{"Path", false, -1},
                                {"TypeDefinition", false, 0},
                                {"AssemblyName", false},
                                {"Language", false}});
    if (!b.Has("Path")) Unsupported("Add-Type without -Path");
    const std::string path = ToText(b.Get("Path"));
    const auto bytes = host_.ReadFile(path);
    if (!bytes) Fail("Add-Type : Cannot find path '" + path + "' because it does not exist.");
    const std::string source = DecodeText(*bytes);
    if (source.find("namespace RunProcess") == std::string::npos ||
        source.find("class exec") == std::string::npos ||
        source.find("RunProcess(") == std::string::npos) {
      Unsupported("Add-Type of " + path + " (only AgentBaker's run-process.cs is stubbed)");
    }
    run_process_loaded = true;
    return true;
  }
  if (is("Get-ScheduledTask")) {
    const Bound b = Bind(call, {{"TaskName", false, 0}, {"TaskPath", false}});
    WriteError("Get-ScheduledTask",
               "No MSFT_ScheduledTask objects found with property 'TaskName' equal to '" +
                   ToText(b.Get("TaskName")) + "'.  Verify the value of the property and retry.",
               b.error_action);
    return true;
  }
  for (const HnsKind& kind : kHnsKinds) {
    const std::string file = std::string(kHnsFolder) + kind.file;
    if (is(kind.get)) {
      Bind(call, {});
      const auto bytes = host_.ReadFile(file);
      if (!bytes) return true;
      int index = 0;
      for (const auto& line : SplitLines(DecodeText(*bytes))) {
        const auto words = Words(line);
        if (words.empty() || words[0][0] == '#') continue;
        auto object = NewCustomObject();
        object->Set(kind.key, Value::String(words[0]));
        if (std::string(kind.key) == "Name") {
          object->Set("Type", Value::String(words.size() > 1 ? words[1] : "L2Bridge"));
          object->Set("Id", Value::String("hns-network-" + std::to_string(++index)));
        }
        Emit(*call.out, Value::Object(object));
      }
      return true;
    }
    if (is(kind.remove)) {
      const Bound b = Bind(call, {{"InputObject", false, 0}});
      const Values targets = b.Has("InputObject") ? Enumerate(b.Get("InputObject"), false)
                                                  : (call.has_input ? call.input : Values{});
      for (const Value& target : targets) {
        const Value* key =
            target.kind == Value::Kind::kObject ? target.object->Find(kind.key) : nullptr;
        if (!key) Fail(std::string(kind.remove) + " : the object has no " + kind.key + ".");
        const std::string id = ToText(*key);
        const auto bytes = host_.ReadFile(file);
        std::string kept;
        for (const auto& line :
             bytes ? SplitLines(DecodeText(*bytes)) : std::vector<std::string>{}) {
          const auto words = Words(line);
          if (!words.empty() && words[0] == id) continue;
          kept += line + "\r\n";
        }
        std::string error;
        host_.WriteFile(file, kept, false, error);
        const std::string log = std::string(kHnsFolder) + "hns-calls.log";
        host_.WriteFile(log, std::string(kind.remove) + " " + id + "\r\n", true, error);
      }
      return true;
    }
  }
  return false;
}

}  // namespace dxshim::test::node_standin::powershell
