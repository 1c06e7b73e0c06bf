// Properties and methods of values (System.String's, arrays', hashtables', objects'), indexing,
// and the .NET static members the scripts call ([System.Convert], [IO.Path], [string],
// [System.Diagnostics.ProcessPriorityClass], Add-Type's [RunProcess.exec]).
#include <cctype>
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_native_arguments.h"

namespace dxshim::test::node_standin::powershell {

namespace {

bool IsWhite(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// A .NET char[] argument given as strings: each character of each.
std::string Characters(const Values& args) {
  std::string chars;
  for (const Value& arg : args) {
    for (const Value& item : Enumerate(arg, false)) chars += ToText(item);
  }
  return chars;
}

std::string TrimChars(const std::string& text, const std::string& chars, bool start, bool end) {
  const auto drop = [&chars](char c) {
    return chars.empty() ? IsWhite(c) : chars.find(c) != std::string::npos;
  };
  std::size_t first = 0;
  std::size_t last = text.size();
  if (start) {
    while (first < last && drop(text[first])) ++first;
  }
  if (end) {
    while (last > first && drop(text[last - 1])) --last;
  }
  return text.substr(first, last - first);
}

std::string Upper(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

bool IsPathRooted(const std::string& path) {
  return (!path.empty() && (path[0] == '\\' || path[0] == '/')) ||
         (path.size() >= 2 && path[1] == ':');
}

std::string TypeKey(const std::string& type) {
  std::string key = LowerAscii(type);
  if (key.rfind("system.", 0) == 0) key = key.substr(7);
  return key;
}

}  // namespace

Value Interpreter::GetMember(const Value& target, const std::string& name) {
  const std::string member = LowerAscii(name);
  switch (target.kind) {
    case Value::Kind::kNull:
      return member == "count" || member == "length" ? Value::Int(0) : Value();
    case Value::Kind::kString:
      if (member == "length") return Value::Int(static_cast<std::int64_t>(target.text.size()));
      if (member == "count") return Value::Int(1);
      break;
    case Value::Kind::kArray: {
      if (member == "count" || member == "length") {
        return Value::Int(static_cast<std::int64_t>(target.array->size()));
      }
      Values results;  // member enumeration
      for (const Value& item : *target.array) {
        const Value result = GetMember(item, name);
        if (!result.IsNull()) results.push_back(result);
      }
      return Collapse(std::move(results));
    }
    case Value::Kind::kObject: {
      const ObjectData& object = *target.object;
      if (object.hashtable) {
        if (member == "count") return Value::Int(static_cast<std::int64_t>(object.members.size()));
        if (member == "keys" || member == "values") {
          Values items;
          for (const auto& [key, value] : object.members) {
            items.push_back(member == "keys" ? Value::String(key) : value);
          }
          return Value::Array(std::move(items));
        }
      }
      if (const Value* found = object.Find(name)) return *found;
      if (member == "count" || member == "length") return Value::Int(1);
      if (object.hashtable) return Value();
      if (object.type_name == "System.Management.Automation.PSCustomObject") {
        if (strict()) {
          Fail("The property '" + name +
               "' cannot be found on this object. Verify that the property exists.");
        }
        return Value();  // a property it does not have: $null, as without Set-StrictMode
      }
      break;
    }
    default:
      if (member == "count" || member == "length") return Value::Int(1);
      break;
  }
  Unsupported("the property " + name + " of a " + TypeName(target));
}

void Interpreter::SetMember(const Value& target, const std::string& name, Value value) {
  if (target.kind == Value::Kind::kObject &&
      (target.object->hashtable || target.object->Find(name))) {
    target.object->Set(name, std::move(value));
    return;
  }
  if (target.IsNull()) Fail("The property '" + name + "' cannot be found on this object.");
  Unsupported("setting the property " + name + " of a " + TypeName(target));
}

Value Interpreter::CallMethod(const Value& target, const std::string& name, const Values& args) {
  const std::string method = LowerAscii(name);
  const auto failed = [this, &name, &args](const std::string& why) {
    Fail("Exception calling \"" + name + "\" with \"" + std::to_string(args.size()) +
         "\" argument(s): \"" + why + "\"");
  };
  if (target.IsNull()) Fail("You cannot call a method on a null-valued expression.");
  if (method == "tostring" && args.empty()) return Value::String(ToText(target));
  if (target.IsString()) {
    const std::string& s = target.text;
    if (method == "trim") return Value::String(TrimChars(s, Characters(args), true, true));
    if (method == "trimstart") return Value::String(TrimChars(s, Characters(args), true, false));
    if (method == "trimend") return Value::String(TrimChars(s, Characters(args), false, true));
    if (method == "tolower" || method == "tolowerinvariant") return Value::String(LowerAscii(s));
    if (method == "toupper" || method == "toupperinvariant") return Value::String(Upper(s));
    if (method == "replace" && args.size() == 2) {
      const std::string from = ToText(args[0]);
      const std::string to = ToText(args[1]);
      if (from.empty()) failed("String cannot be of zero length.\r\nParameter name: oldValue");
      std::string out;
      std::size_t at = 0;
      for (std::size_t hit = s.find(from); hit != std::string::npos; hit = s.find(from, at)) {
        out += s.substr(at, hit - at) + to;
        at = hit + from.size();
      }
      return Value::String(out + s.substr(at));
    }
    if (method == "split" && args.size() <= 1) {
      // .NET Framework's String.Split(params char[]): each character separates.
      const std::string separators = Characters(args);
      Values parts;
      std::string part;
      for (const char c : s) {
        const bool split =
            separators.empty() ? IsWhite(c) : separators.find(c) != std::string::npos;
        if (split) {
          parts.push_back(Value::String(part));
          part.clear();
        } else {
          part += c;
        }
      }
      parts.push_back(Value::String(part));
      return Value::Array(std::move(parts));
    }
    if (method == "substring" && (args.size() == 1 || args.size() == 2)) {
      const auto start = ToInteger(args[0]).value_or(-1);
      const auto size = static_cast<std::int64_t>(s.size());
      const auto length = args.size() == 2 ? ToInteger(args[1]).value_or(-1) : size - start;
      if (start < 0 || start > size || length < 0 || start + length > size) {
        failed("Index and length must refer to a location within the string.");
      }
      return Value::String(
          s.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(length)));
    }
    if ((method == "startswith" || method == "endswith" || method == "contains" ||
         method == "indexof" || method == "lastindexof" || method == "equals") &&
        args.size() == 1) {
      const std::string other = ToText(args[0]);
      if (method == "startswith") return Value::Bool(s.rfind(other, 0) == 0);
      if (method == "endswith") {
        return Value::Bool(s.size() >= other.size() &&
                           s.compare(s.size() - other.size(), other.size(), other) == 0);
      }
      if (method == "contains") return Value::Bool(s.find(other) != std::string::npos);
      if (method == "equals") return Value::Bool(s == other);
      const auto at = method == "indexof" ? s.find(other) : s.rfind(other);
      return Value::Int(at == std::string::npos ? -1 : static_cast<std::int64_t>(at));
    }
    if ((method == "padleft" || method == "padright") && !args.empty() && args.size() <= 2) {
      const auto width = static_cast<std::size_t>(ToInteger(args[0]).value_or(0));
      const char pad = args.size() == 2 && !ToText(args[1]).empty() ? ToText(args[1])[0] : ' ';
      if (s.size() >= width) return target;
      const std::string fill(width - s.size(), pad);
      return Value::String(method == "padleft" ? fill + s : s + fill);
    }
  }
  if (target.IsArray()) {
    Values results;  // method enumeration (PowerShell 3+): on each item
    for (const Value& item : *target.array) {
      const Value result = CallMethod(item, name, args);
      if (!result.IsNull()) results.push_back(result);
    }
    return Collapse(std::move(results));
  }
  if (target.kind == Value::Kind::kObject && target.object->type_name == "System.IO.TextWriter" &&
      method == "writeline") {
    host_.WriteError((args.empty() ? std::string() : ToText(args[0])) + "\r\n");
    return Value();
  }
  if (target.kind == Value::Kind::kObject &&
      target.object->type_name == "System.Security.AccessControl.DirectorySecurity" &&
      method == "getowner" && args.size() == 1) {
    // GetOwner([System.Security.Principal.SecurityIdentifier]): the owner of Get-Acl's Sddl.
    if (TypeKey(ToText(args[0])) != "security.principal.securityidentifier") {
      Unsupported("GetOwner of a " + ToText(args[0]));
    }
    const Value* sddl = target.object->Find("Sddl");
    auto sid = NewObject("System.Security.Principal.SecurityIdentifier", ToText(*sddl).substr(2));
    sid->Set("Value", Value::String(ToText(*sddl).substr(2)));
    return Value::Object(sid);
  }
  if (target.kind == Value::Kind::kObject && target.object->hashtable) {
    ObjectData& table = *target.object;
    if ((method == "containskey" || method == "contains") && args.size() == 1) {
      return Value::Bool(table.Find(ToText(args[0])) != nullptr);
    }
    if (method == "add" && args.size() == 2) {
      if (table.Find(ToText(args[0]))) failed("Item has already been added.");
      table.Set(ToText(args[0]), args[1]);
      return Value();
    }
    if (method == "remove" && args.size() == 1) {
      const std::string key = ToText(args[0]);
      for (auto it = table.members.begin(); it != table.members.end(); ++it) {
        if (EqualsNoCase(it->first, key)) {
          table.members.erase(it);
          break;
        }
      }
      return Value();
    }
  }
  Unsupported("the method " + name + "() of a " + TypeName(target));
}

Value Interpreter::GetStatic(const std::string& type, const std::string& name) {
  const std::string key = TypeKey(type);
  const std::string member = LowerAscii(name);
  if (key == "diagnostics.processpriorityclass") {
    static const char* const kClasses[] = {"Normal",   "Idle",        "High",
                                           "RealTime", "BelowNormal", "AboveNormal"};
    for (const char* value : kClasses) {
      if (EqualsNoCase(member, value)) return Value::String(value);
    }
  }
  if (key == "string" && member == "empty") return Value::String("");
  if (key == "environment" && member == "osversion") {
    auto os = NewObject("System.OperatingSystem", "Microsoft Windows NT " + host_.OsVersion());
    os->Set("Version", VersionValue(host_.OsVersion()));
    os->Set("Platform", Value::String("Win32NT"));
    return Value::Object(os);
  }
  if (key == "console" && member == "error") {
    return Value::Object(NewObject("System.IO.TextWriter", "System.IO.SyncTextWriter"));
  }
  if (key == "console" && member == "outputencoding") {
    if (!console_encoding_.IsNull()) return console_encoding_;
    return Value::Object(
        NewObject("System.Text.SBCSCodePageEncoding", "System.Text.SBCSCodePageEncoding"));
  }
  if (key == "text.encoding" && member == "utf8") {
    return Value::Object(NewObject("System.Text.UTF8Encoding", "System.Text.UTF8Encoding"));
  }
  if (key == "environment" && member == "newline") return Value::String("\r\n");
  Unsupported("[" + type + "]::" + name);
}

// [Console]::OutputEncoding = E: kept and read back; the console's code page is the host's (the
// stand-in writes UTF-8 either way).
void Interpreter::SetStatic(const std::string& type, const std::string& name, Value value) {
  if (TypeKey(type) == "console" && LowerAscii(name) == "outputencoding") {
    console_encoding_ = std::move(value);
    return;
  }
  Unsupported("assigning [" + type + "]::" + name);
}

Value Interpreter::CallStatic(const std::string& type, const std::string& name,
                              const Values& args) {
  const std::string key = TypeKey(type);
  const std::string method = LowerAscii(name);
  const auto failed = [this, &name, &args](const std::string& why) {
    Fail("Exception calling \"" + name + "\" with \"" + std::to_string(args.size()) +
         "\" argument(s): \"" + why + "\"");
  };
  const auto arg = [&args](std::size_t i) { return i < args.size() ? args[i] : Value(); };
  if (key == "convert" && args.size() == 1) {
    const Value& v = args[0];
    if (method == "toboolean") {
      if (v.IsNull()) return Value::Bool(false);
      if (v.kind == Value::Kind::kBool) return v;
      if (v.IsNumber()) return Value::Bool(ToBool(v));
      const std::string text = TrimChars(ToText(v), "", true, true);
      if (EqualsNoCase(text, "true")) return Value::Bool(true);
      if (EqualsNoCase(text, "false")) return Value::Bool(false);
      failed("String was not recognized as a valid Boolean.");
    }
    if (method == "touint32" || method == "toint32" || method == "toint64" ||
        method == "touint64") {
      if (v.IsNull()) return Value::Int(0);
      if (v.IsString() && (v.text.empty() || !ToNumber(v))) {
        failed("Input string was not in a correct format.");
      }
      const auto number = ToInteger(v);
      if (!number) failed("Input string was not in a correct format.");
      if (method.find("uint") != std::string::npos && *number < 0) {
        failed("Value was either too large or too small for a UInt32.");
      }
      return Value::Int(*number);
    }
    if (method == "tostring") return Value::String(ToText(v));
  }
  if (key == "io.path") {
    const auto checked = [&failed](const std::string& path) {
      for (const char c : path) {
        if (c == '"' || c == '<' || c == '>' || c == '|' || static_cast<unsigned char>(c) < 32) {
          failed("Illegal characters in path.");
        }
      }
      return path;
    };
    if (method == "combine" && !args.empty()) {
      std::string path;
      for (const Value& part : args) {
        if (part.IsNull())
          failed("Value cannot be null.\r\nParameter name: path" +
                 std::to_string(&part - &args[0] + 1));
        const std::string next = checked(ToText(part));
        if (next.empty()) continue;
        if (path.empty() || IsPathRooted(next)) {
          path = next;
        } else {
          const char last = path.back();
          path += (last == '\\' || last == '/' || last == ':') ? next : "\\" + next;
        }
      }
      return Value::String(path);
    }
    const std::string path = checked(ToText(arg(0)));
    const auto slash = path.find_last_of("\\/");
    const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
    if (method == "getfilename") return Value::String(file);
    if (method == "getdirectoryname") {
      if (slash == std::string::npos) return Value::String("");
      if (slash <= 2 && path.size() >= 2 && path[1] == ':' && slash + 1 == path.size())
        return Value();
      return Value::String(path.substr(0, slash == 2 && path[1] == ':' ? 3 : slash));
    }
    const auto dot = file.rfind('.');
    if (method == "getextension")
      return Value::String(dot == std::string::npos ? "" : file.substr(dot));
    if (method == "getfilenamewithoutextension") return Value::String(file.substr(0, dot));
    if (method == "ispathrooted") return Value::Bool(IsPathRooted(path));
    if (method == "getfullpath") return Value::String(host_.FullPath(path));
  }
  if (key == "string") {
    if (method == "isnullorempty") return Value::Bool(ToText(arg(0)).empty());
    if (method == "isnullorwhitespace") {
      return Value::Bool(TrimChars(ToText(arg(0)), "", true, true).empty());
    }
    if (method == "join" && args.size() >= 2) {
      Values items;
      for (std::size_t i = 1; i < args.size(); ++i) {
        for (const Value& item : Enumerate(args[i], false)) items.push_back(item);
      }
      return BinaryOperator("-join", Value::Array(std::move(items)), args[0]);
    }
  }
  if (key == "environment" && method == "getenvironmentvariable" && args.size() == 1) {
    const auto value = host_.GetEnvironment(ToText(args[0]));
    return value ? Value::String(*value) : Value();
  }
  if (key == "runprocess.exec" && method == "runprocess") {
    // AgentBaker's run-process.cs (compiled by Add-Type): Process.Start of EXECUTABLE with ARGS
    // in the executable's folder, priority class set, waited for; its exit code returned.
    if (!run_process_loaded) Fail("Unable to find type [RunProcess.exec].");
    const std::string executable = ToText(arg(0));
    const std::string arguments = ToText(arg(1));
    const auto slash = executable.find_last_of("\\/");
    const std::string folder = slash == std::string::npos ? "" : executable.substr(0, slash);
    const ProgramRun run = host_.Run(ProcessCommandLine(executable, arguments), folder, false,
                                     EqualsNoCase(ToText(arg(2)), "AboveNormal"));
    if (!run.started) failed("The system cannot find the file specified");
    return Value::Int(run.exit_code);
  }
  Unsupported("[" + type + "]::" + name + "() with " + std::to_string(args.size()) +
              " argument(s)");
}

Value Interpreter::Index(const Value& target, const Value& index) {
  if (target.IsNull()) Fail("Cannot index into a null array.");
  if (index.IsArray()) Unsupported("indexing with an array (a slice)");
  if (target.kind == Value::Kind::kObject && target.object->hashtable) {
    const Value* found = target.object->Find(ToText(index));
    return found ? *found : Value();
  }
  const auto position = ToInteger(index);
  if (!position) Fail("Cannot convert \"" + ToText(index) + "\" to an index.");
  if (target.IsArray() || target.IsString()) {
    const auto size =
        static_cast<std::int64_t>(target.IsArray() ? target.array->size() : target.text.size());
    auto at = *position;
    if (at < 0) at += size;
    if (at < 0 || at >= size) return Value();
    const auto i = static_cast<std::size_t>(at);
    return target.IsArray() ? (*target.array)[i] : Value::String(std::string(1, target.text[i]));
  }
  if (*position == 0 || *position == -1) return target;  // a scalar is its own item 0
  return Value();
}

}  // namespace dxshim::test::node_standin::powershell
