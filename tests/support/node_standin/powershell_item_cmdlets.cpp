// The item cmdlets beyond reading and writing: Join-Path, Copy-Item, Move-Item, Get-ChildItem,
// Get-FileHash (SHA256), Get-Acl (its owner, through GetOwner), Get-Command (programs), and
// Set-StrictMode (-Version Latest's rules for unset variables and missing properties).
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {

namespace {

bool IsSeparator(char c) { return c == '\\' || c == '/'; }

std::string Joined(const std::string& parent, const std::string& child) {
  std::string left = parent;
  while (!left.empty() && IsSeparator(left.back())) left.pop_back();
  std::size_t start = 0;
  while (start < child.size() && IsSeparator(child[start])) ++start;
  return left + "\\" + child.substr(start);
}

std::string LeafOf(const std::string& path) {
  const auto slash = path.find_last_of("\\/");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A file or folder object as Get-ChildItem and New-Item give one.
Value ItemValue(const std::string& full, bool directory) {
  auto item = NewObject(directory ? "System.IO.DirectoryInfo" : "System.IO.FileInfo", full);
  item->Set("FullName", Value::String(full));
  item->Set("Name", Value::String(LeafOf(full)));
  return Value::Object(item);
}

// `*` and `?` against a name, without case (a folder's last part only).
bool Wildcard(const std::string& pattern, const std::string& name) {
  if (pattern.empty()) return name.empty();
  if (pattern[0] == '*') {
    for (std::size_t i = 0; i <= name.size(); ++i) {
      if (Wildcard(pattern.substr(1), name.substr(i))) return true;
    }
    return false;
  }
  if (name.empty()) return false;
  const bool same = pattern[0] == '?' || EqualsNoCase(pattern.substr(0, 1), name.substr(0, 1));
  return same && Wildcard(pattern.substr(1), name.substr(1));
}

}  // namespace

bool Interpreter::ItemCmdlet(const std::string& name, Call& call) {
  Output& out = *call.out;
  const auto is = [&name](const char* cmdlet) { return EqualsNoCase(name, cmdlet); };
  if (is("Join-Path")) {
    const Bound b = Bind(call, {{"Path", false, 0}, {"ChildPath", false, 1}});
    for (const Value& parent : Enumerate(b.Get("Path"), false)) {
      Emit(out, Value::String(Joined(ToText(parent), ToText(b.Get("ChildPath")))));
    }
    return true;
  }
  if (is("Copy-Item") || is("Move-Item")) {
    const Bound b = Bind(
        call,
        {{"Path", false, 0, false, {"LiteralPath"}}, {"Destination", false, 1}, {"Force", true}});
    for (const Value& source : Enumerate(b.Get("Path"), false)) {
      const std::string from = ToText(source);
      std::string to = ToText(b.Get("Destination"));
      if (host_.KindOf(to) == PathKind::kDirectory) to = Joined(to, LeafOf(from));
      if (host_.KindOf(from) != PathKind::kFile) {
        WriteError(call.name,
                   "Cannot find path '" + host_.FullPath(from) + "' because it does not exist.",
                   b.error_action);
        continue;
      }
      if (host_.KindOf(to) == PathKind::kFile && is("Move-Item") && !ToBool(b.Get("Force"))) {
        WriteError(call.name, "Cannot create a file when that file already exists.",
                   b.error_action);
        continue;
      }
      std::string error;
      const bool done =
          is("Copy-Item") ? host_.CopyPath(from, to, error) : host_.MovePath(from, to, error);
      if (!done) WriteError(call.name, error, b.error_action);
    }
    return true;
  }
  if (is("Get-ChildItem")) {
    const Bound b = Bind(call, {{"Path", false, 0}, {"Filter", false, 1}, {"File", true}});
    for (const Value& given : Enumerate(b.Get("Path"), false)) {
      std::string folder = ToText(given);
      std::string pattern = b.Has("Filter") ? ToText(b.Get("Filter")) : "*";
      if (folder.find_first_of("*?") != std::string::npos) {
        pattern = LeafOf(folder);
        folder = folder.substr(0, folder.size() - pattern.size());
      } else if (host_.KindOf(folder) != PathKind::kDirectory) {
        WriteError("Get-ChildItem",
                   "Cannot find path '" + host_.FullPath(folder) + "' because it does not exist.",
                   b.error_action);
        continue;
      }
      for (const auto& entry : host_.ListDirectory(folder)) {
        if (!Wildcard(pattern, entry)) continue;
        const std::string full = host_.FullPath(Joined(folder, entry));
        const bool directory = host_.KindOf(full) == PathKind::kDirectory;
        if (!(directory && ToBool(b.Get("File")))) Emit(out, ItemValue(full, directory));
      }
    }
    return true;
  }
  if (is("Get-FileHash")) {
    const Bound b = Bind(call, {{"Path", false, 0, false, {"LiteralPath"}}, {"Algorithm", false}});
    if (b.Has("Algorithm") && !EqualsNoCase(ToText(b.Get("Algorithm")), "SHA256")) {
      Unsupported("Get-FileHash -Algorithm " + ToText(b.Get("Algorithm")));
    }
    for (const Value& path : Enumerate(b.Get("Path"), false)) {
      const auto hash = host_.FileSha256(ToText(path));
      if (!hash) {
        WriteError("Get-FileHash", "Cannot find path '" + ToText(path) + "'.", b.error_action);
        continue;
      }
      auto info = NewObject("Microsoft.PowerShell.Commands.FileHashInfo");
      info->Set("Algorithm", Value::String("SHA256"));
      info->Set("Hash", Value::String(*hash));
      info->Set("Path", Value::String(host_.FullPath(ToText(path))));
      Emit(out, Value::Object(info));
    }
    return true;
  }
  if (is("Get-Acl")) {
    const Bound b = Bind(call, {{"Path", false, 0}});
    const std::string path = ToText(b.Get("Path"));
    const auto owner = host_.OwnerSid(path);
    if (!owner) {
      WriteError("Get-Acl", "Cannot find path '" + path + "'.", b.error_action);
      return true;
    }
    // Its Sddl holds the owner; GetOwner([SecurityIdentifier]) reads it (powershell_members.cpp).
    auto acl = NewObject("System.Security.AccessControl.DirectorySecurity");
    acl->Set("Path", Value::String(host_.FullPath(path)));
    acl->Set("Sddl", Value::String("O:" + *owner));
    Emit(out, Value::Object(acl));
    return true;
  }
  if (is("Get-Command")) {
    const Bound b = Bind(call, {{"Name", false, 0}});
    for (const Value& wanted : Enumerate(b.Get("Name"), false)) {
      const auto path = host_.FindProgram(ToText(wanted));
      if (!path) {
        WriteError("Get-Command",
                   "The term '" + ToText(wanted) +
                       "' is not recognized as the name of a cmdlet, function, script file, or "
                       "operable program.",
                   b.error_action);
        continue;
      }
      auto info = NewObject("System.Management.Automation.ApplicationInfo", LeafOf(*path));
      info->Set("Name", Value::String(LeafOf(*path)));
      info->Set("Source", Value::String(*path));
      info->Set("Path", Value::String(*path));
      Emit(out, Value::Object(info));
    }
    return true;
  }
  if (is("Set-StrictMode")) {
    const Bound b = Bind(call, {{"Version", false, 0}, {"Off", true}});
    strict_ = !ToBool(b.Get("Off"));
    if (strict_ && !EqualsNoCase(ToText(b.Get("Version")), "Latest")) {
      Unsupported("Set-StrictMode -Version " + ToText(b.Get("Version")));
    }
    return true;
  }
  return false;
}

}  // namespace dxshim::test::node_standin::powershell
