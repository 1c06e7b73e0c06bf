// The file system cmdlets: Get-Content, Set-Content, Add-Content, Test-Path, New-Item (and
// mkdir, Windows PowerShell's function around it), Remove-Item.
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {

namespace {

bool HasWildcard(const std::string& path) { return path.find_first_of("*?[") != std::string::npos; }

}  // namespace

bool Interpreter::FileCmdlet(const std::string& name, Call& call) {
  Output& out = *call.out;
  const auto is = [&name](const char* cmdlet) { return EqualsNoCase(name, cmdlet); };
  const auto paths = [this, &call](const Bound& b) {
    std::vector<std::string> list;
    Values given = Enumerate(b.Get("Path"), false);
    if (!b.Has("Path") && call.has_input) given = call.input;
    for (const Value& path : given) {
      const std::string text = ToText(path);
      if (text.empty()) {
        Fail(call.name +
             " : Cannot bind argument to parameter 'Path' because it is an empty "
             "string.");
      }
      if (HasWildcard(text)) Unsupported(call.name + " of the wildcard path " + text);
      list.push_back(text);
    }
    return list;
  };
  if (is("Get-Content")) {
    const Bound b = Bind(call, {{"Path", false, 0, false, {"PSPath", "LiteralPath", "LP"}},
                                {"Raw", true},
                                {"Encoding", false},
                                {"TotalCount", false, -1, false, {"First", "Head"}}});
    for (const auto& path : paths(b)) {
      const auto bytes = host_.ReadFile(path);
      if (!bytes) {
        WriteError("Get-Content",
                   "Cannot find path '" + host_.FullPath(path) + "' because it does not exist.",
                   b.error_action);
        continue;
      }
      const std::string text = DecodeText(*bytes);
      if (ToBool(b.Get("Raw"))) {
        if (!text.empty()) Emit(out, Value::String(text));
        continue;
      }
      auto lines = SplitLines(text);
      if (b.Has("TotalCount")) {
        const auto n = static_cast<std::size_t>(ToInteger(b.Get("TotalCount")).value_or(0));
        if (lines.size() > n) lines.resize(n);
      }
      for (auto& line : lines) Emit(out, Value::String(std::move(line)));
    }
    return true;
  }
  if (is("Set-Content") || is("Add-Content")) {
    const Bound b = Bind(call, {{"Path", false, 0, false, {"PSPath", "LiteralPath"}},
                                {"Value", false, 1},
                                {"Encoding", false},
                                {"Force", true},
                                {"NoNewline", true},
                                {"PassThru", true}});
    if (ToBool(b.Get("NoNewline")) || ToBool(b.Get("PassThru"))) {
      Unsupported(call.name + " -NoNewline/-PassThru");
    }
    const Values items = b.Has("Value") ? Enumerate(b.Get("Value"), false)
                                        : (call.has_input ? call.input : Values{});
    // Windows PowerShell 5.1 writes these in the ANSI code page ("Default") unless told.
    const std::string encoding = b.Has("Encoding") ? ToText(b.Get("Encoding")) : "default";
    const std::vector<std::string> targets = [&] {
      Bound only_path = b;
      return paths(only_path);
    }();
    for (const auto& path : targets) {
      WriteFileText(path, items, encoding, is("Add-Content"), call.name, b.error_action);
    }
    return true;
  }
  if (is("Test-Path")) {
    const Bound b = Bind(call, {{"Path", false, 0, false, {"PSPath", "LiteralPath"}},
                                {"PathType", false},
                                {"IsValid", true}});
    if (ToBool(b.Get("IsValid"))) Unsupported("Test-Path -IsValid");
    if (!b.Has("Path") || b.Get("Path").IsNull()) {
      Fail("Test-Path : Cannot bind argument to parameter 'Path' because it is null.");
    }
    const std::string type = LowerAscii(ToText(b.Get("PathType")));
    for (const auto& path : paths(b)) {
      const PathKind kind = host_.KindOf(path);
      bool exists = kind != PathKind::kNone;
      if (type == "leaf") exists = kind == PathKind::kFile;
      if (type == "container") exists = kind == PathKind::kDirectory;
      Emit(out, Value::Bool(exists));
    }
    return true;
  }
  if (is("New-Item") || is("mkdir")) {
    const Bound b = Bind(call, {{"Path", false, 0},
                                {"Name", false},
                                {"ItemType", false, -1, false, {"Type"}},
                                {"Value", false},
                                {"Force", true}});
    const std::string type = is("mkdir") ? "directory" : LowerAscii(ToText(b.Get("ItemType")));
    if (type != "directory" && type != "file" && !type.empty()) {
      Unsupported("New-Item -ItemType " + type);
    }
    std::vector<std::string> targets = b.Has("Path") ? paths(b) : std::vector<std::string>{"."};
    for (auto& path : targets) {
      if (b.Has("Name")) path += "\\" + ToText(b.Get("Name"));
      const std::string full = host_.FullPath(path);
      const PathKind kind = host_.KindOf(path);
      const bool force = ToBool(b.Get("Force"));
      std::string error;
      if (type == "directory") {
        if (kind != PathKind::kNone && !(force && kind == PathKind::kDirectory)) {
          WriteError(call.name, "An item with the specified name " + full + " already exists.",
                     b.error_action);
          continue;
        }
        if (kind == PathKind::kNone && !host_.MakeDirectory(path, error)) {
          WriteError(call.name, error, b.error_action);
          continue;
        }
      } else {
        if (kind != PathKind::kNone && !force) {
          WriteError(call.name, "The file '" + full + "' already exists.", b.error_action);
          continue;
        }
        if (!host_.WriteFile(path, ToText(b.Get("Value")), false, error)) {
          WriteError(call.name, error, b.error_action);
          continue;
        }
      }
      const auto slash = full.find_last_of("\\/");
      auto item =
          NewObject(type == "directory" ? "System.IO.DirectoryInfo" : "System.IO.FileInfo", full);
      item->Set("FullName", Value::String(full));
      item->Set("Name", Value::String(slash == std::string::npos ? full : full.substr(slash + 1)));
      Emit(out, Value::Object(item));
    }
    return true;
  }
  if (is("Remove-Item")) {
    const Bound b = Bind(
        call,
        {{"Path", false, 0, false, {"PSPath", "LiteralPath"}}, {"Force", true}, {"Recurse", true}});
    for (const auto& path : paths(b)) {
      if (host_.KindOf(path) == PathKind::kNone) {
        WriteError("Remove-Item",
                   "Cannot find path '" + host_.FullPath(path) + "' because it does not exist.",
                   b.error_action);
        continue;
      }
      std::string error;
      if (!host_.RemovePath(path, ToBool(b.Get("Recurse")), error)) {
        WriteError("Remove-Item", error, b.error_action);
      }
    }
    return true;
  }
  return false;
}

}  // namespace dxshim::test::node_standin::powershell
