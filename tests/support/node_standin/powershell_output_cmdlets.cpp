// The cmdlets that write, shape and pass on output: Write-Host, Write-Output, Write-Warning,
// Write-Error, Write-Verbose, Out-Null, Out-String, Out-File, Tee-Object, ForEach-Object,
// Where-Object, Select-Object, Select-String, ConvertTo-Json, ConvertFrom-Json, Invoke-Expression,
// Get-Date, Start-Sleep.
#include <chrono>
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_json.h"
#include "tests/support/node_standin/powershell_patterns.h"
#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {

namespace {

// The values a cmdlet works on: its -InputObject (or positional) value, else its pipeline input.
Values Inputs(const Call& call, const Bound& bound, const std::string& parameter) {
  if (bound.Has(parameter)) return Enumerate(bound.Get(parameter), false);
  return call.has_input ? call.input : Values{};
}

}  // namespace

bool Interpreter::OutputCmdlet(const std::string& name, Call& call) {
  Output& out = *call.out;
  const auto is = [&name](const char* cmdlet) { return EqualsNoCase(name, cmdlet); };
  if (is("Write-Host")) {
    const Bound b = Bind(call, {{"Object", false, 0, true},
                                {"NoNewline", true},
                                {"Separator", false},
                                {"ForegroundColor", false},
                                {"BackgroundColor", false}});
    const std::string separator = b.Has("Separator") ? ToText(b.Get("Separator")) : " ";
    Values objects = b.remaining;
    if (objects.empty() && call.has_input) objects = call.input;
    std::string text;
    bool first = true;
    for (const Value& object : objects) {
      for (const Value& item : Enumerate(object, false)) {
        if (!first) text += separator;
        first = false;
        text += ToText(item);
      }
    }
    host_.WriteOutput(text + (ToBool(b.Get("NoNewline")) ? "" : "\r\n"));
    return true;
  }
  if (is("Write-Output")) {
    const Bound b = Bind(call, {{"InputObject", false, 0, true}, {"NoEnumerate", true}});
    const Values objects = b.remaining.empty() && call.has_input ? call.input : b.remaining;
    for (const Value& object : objects) {
      if (ToBool(b.Get("NoEnumerate"))) {
        Emit(out, object);
      } else {
        EmitEnumerated(out, object);
      }
    }
    return true;
  }
  if (is("Write-Warning") || is("Write-Verbose") || is("Write-Debug") || is("Write-Error") ||
      is("Write-Information")) {
    const Bound b = Bind(call, {{"Message", false, 0, true, {"Msg", "MessageData"}}});
    std::string message;
    for (const Value& part : b.remaining) message += ToText(part);
    if (is("Write-Warning")) host_.WriteOutput("WARNING: " + message + "\r\n");
    if (is("Write-Error")) WriteError(Where(), message, b.error_action);
    return true;  // verbose, debug and information output are off by default
  }
  if (is("Out-Null")) {
    Bind(call, {{"InputObject", false}});
    return true;
  }
  if (is("Out-String")) {
    const Bound b = Bind(call, {{"InputObject", false}, {"Width", false}, {"Stream", true}});
    if (ToBool(b.Get("Stream"))) Unsupported("Out-String -Stream");
    std::string text;
    for (const Value& item : Inputs(call, b, "InputObject")) text += ToText(item) + "\r\n";
    Emit(out, Value::String(text));
    return true;
  }
  if (is("Out-File") || is("Tee-Object")) {
    const bool tee = is("Tee-Object");
    const Bound b = Bind(call, tee ? std::vector<ParamSpec>{{"FilePath", false, 0, false, {"Path"}},
                                                            {"Append", true},
                                                            {"InputObject", false}}
                                   : std::vector<ParamSpec>{{"FilePath", false, 0, false, {"Path"}},
                                                            {"Encoding", false, 1},
                                                            {"Append", true},
                                                            {"Force", true},
                                                            {"NoClobber", true},
                                                            {"Width", false},
                                                            {"InputObject", false}});
    if (!b.Has("FilePath")) Unsupported(call.name + " without -FilePath");
    if (ToBool(b.Get("NoClobber"))) Unsupported("Out-File -NoClobber");
    const Values items = Inputs(call, b, "InputObject");
    // Windows PowerShell 5.1 writes both in UTF-16 ("Unicode") unless told otherwise.
    const std::string encoding = b.Has("Encoding") ? ToText(b.Get("Encoding")) : "unicode";
    WriteFileText(ToText(b.Get("FilePath")), items, encoding, ToBool(b.Get("Append")), call.name,
                  b.error_action);
    if (tee) {
      for (const Value& item : items) Emit(out, item);
    }
    return true;
  }
  if (is("ForEach-Object")) {
    const Bound b = Bind(call, {{"Process", false, 0},
                                {"Begin", false},
                                {"End", false},
                                {"MemberName", false},
                                {"InputObject", false}});
    if (b.Has("Begin") || b.Has("End") || b.Has("MemberName")) {
      Unsupported("ForEach-Object -Begin, -End or -MemberName");
    }
    const Value block = b.Get("Process");
    if (block.kind != Value::Kind::kScriptBlock)
      Unsupported("ForEach-Object without a script block");
    const Values items =
        call.has_input || b.Has("InputObject") ? Inputs(call, b, "InputObject") : Values{Value()};
    for (const Value& item : items) InvokeScriptBlockHere(block, item, out);
    return true;
  }
  if (is("Where-Object")) {
    static const char* const kOperators[] = {
        "EQ",      "NE",    "GT",       "GE",       "LT",          "LE",       "Like",
        "NotLike", "Match", "NotMatch", "Contains", "NotContains", "In",       "NotIn",
        "CEQ",     "CNE",   "CLike",    "CNotLike", "CMatch",      "CNotMatch"};
    std::vector<ParamSpec> specs = {
        {"FilterScript", false, 0}, {"Value", false, 1}, {"InputObject", false}};
    for (const char* op : kOperators) specs.push_back({op, true});
    const Bound b = Bind(call, specs);
    const Value first = b.Get("FilterScript");
    std::string op;
    for (const char* candidate : kOperators) {
      if (b.Has(candidate) && ToBool(b.Get(candidate))) op = "-" + LowerAscii(candidate);
    }
    for (const Value& item : Inputs(call, b, "InputObject")) {
      bool keep = false;
      if (first.kind == Value::Kind::kScriptBlock) {
        Values result;
        Output collect{&result, false};
        InvokeScriptBlockHere(first, item, collect);
        keep = ToBool(Collapse(std::move(result)));
      } else {
        // Where-Object Property -Operator Value (PowerShell 3's simplified syntax).
        const Value property = GetMember(item, ToText(first));
        keep = op.empty() ? ToBool(property) : ToBool(BinaryOperator(op, property, b.Get("Value")));
      }
      if (keep) Emit(out, item);
    }
    return true;
  }
  if (is("Select-Object")) {
    const Bound b = Bind(call, {{"Property", false, 0},
                                {"First", false},
                                {"Last", false},
                                {"Skip", false},
                                {"Index", false},
                                {"ExpandProperty", false},
                                {"Unique", true},
                                {"InputObject", false}});
    if (b.Has("Property") || ToBool(b.Get("Unique")))
      Unsupported("Select-Object -Property/-Unique");
    Values items = Inputs(call, b, "InputObject");
    if (b.Has("Skip")) {
      const auto skip = static_cast<std::size_t>(ToInteger(b.Get("Skip")).value_or(0));
      items.erase(items.begin(),
                  items.begin() + static_cast<std::ptrdiff_t>(std::min(skip, items.size())));
    }
    if (b.Has("Index")) {
      Values picked;
      for (const Value& index : Enumerate(b.Get("Index"), false)) {
        const auto i = ToInteger(index).value_or(-1);
        if (i >= 0 && static_cast<std::size_t>(i) < items.size()) {
          picked.push_back(items[static_cast<std::size_t>(i)]);
        }
      }
      items = std::move(picked);
    }
    if (b.Has("First")) {
      const auto n = static_cast<std::size_t>(ToInteger(b.Get("First")).value_or(0));
      if (items.size() > n) items.resize(n);
    }
    if (b.Has("Last")) {
      const auto n = static_cast<std::size_t>(ToInteger(b.Get("Last")).value_or(0));
      if (items.size() > n)
        items.erase(items.begin(), items.end() - static_cast<std::ptrdiff_t>(n));
    }
    for (const Value& item : items) {
      if (!b.Has("ExpandProperty")) {
        Emit(out, item);
        continue;
      }
      const std::string property = ToText(b.Get("ExpandProperty"));
      if (item.kind != Value::Kind::kObject || !item.object->Find(property)) {
        WriteError("Select-Object", "Property \"" + property + "\" cannot be found.",
                   b.error_action);
        continue;
      }
      EmitEnumerated(out, *item.object->Find(property));
    }
    return true;
  }
  if (is("Select-String")) {
    const Bound b = Bind(call, {{"Pattern", false, 0},
                                {"Path", false, 1},
                                {"SimpleMatch", true},
                                {"CaseSensitive", true},
                                {"NotMatch", true},
                                {"Quiet", true},
                                {"InputObject", false}});
    const bool simple = ToBool(b.Get("SimpleMatch"));
    const bool cs = ToBool(b.Get("CaseSensitive"));
    const std::string pattern = ToText(b.Get("Pattern"));
    std::string error;
    const auto regex = simple ? std::nullopt : DotNetRegex(pattern, cs, error);
    if (!simple && !regex) Unsupported(error);
    std::vector<std::pair<std::string, std::string>> lines;  // path, line
    if (b.Has("Path")) {
      for (const Value& path : Enumerate(b.Get("Path"), false)) {
        const auto bytes = host_.ReadFile(ToText(path));
        if (!bytes) {
          WriteError("Select-String",
                     "Cannot find path '" + ToText(path) + "' because it does not exist.",
                     b.error_action);
          continue;
        }
        for (auto& line : SplitLines(DecodeText(*bytes))) lines.emplace_back(ToText(path), line);
      }
    } else {
      for (const Value& item : Inputs(call, b, "InputObject")) {
        lines.emplace_back("", ToText(item));
      }
    }
    bool any = false;
    std::size_t number = 0;
    std::string last_path;
    for (const auto& [path, line] : lines) {
      number = path == last_path ? number + 1 : 1;
      last_path = path;
      bool found = false;
      if (simple) {
        found = cs ? line.find(pattern) != std::string::npos
                   : LowerAscii(line).find(LowerAscii(pattern)) != std::string::npos;
      } else {
        found = std::regex_search(line, *regex);
      }
      if (found == ToBool(b.Get("NotMatch"))) continue;
      any = true;
      if (ToBool(b.Get("Quiet"))) continue;
      auto match =
          NewObject("Microsoft.PowerShell.Commands.MatchInfo",
                    path.empty() ? line : path + ":" + std::to_string(number) + ":" + line);
      match->Set("Line", Value::String(line));
      match->Set("LineNumber", Value::Int(static_cast<std::int64_t>(number)));
      match->Set("Path", Value::String(path.empty() ? "InputStream" : path));
      match->Set("Pattern", Value::String(pattern));
      Emit(out, Value::Object(match));
    }
    if (ToBool(b.Get("Quiet"))) Emit(out, Value::Bool(any));
    return true;
  }
  if (is("ConvertTo-Json")) {
    const Bound b = Bind(call, {{"InputObject", false, 0}, {"Depth", false}, {"Compress", true}});
    if (ToBool(b.Get("Compress"))) Unsupported("ConvertTo-Json -Compress");
    const Values items = Inputs(call, b, "InputObject");
    const int depth = static_cast<int>(ToInteger(b.Get("Depth")).value_or(2));
    Emit(out, Value::String(WriteJson(items.size() == 1 ? items[0] : Value::Array(items), depth)));
    return true;
  }
  if (is("ConvertFrom-Json")) {
    const Bound b = Bind(call, {{"InputObject", false, 0}});
    std::string text;
    for (const Value& item : Inputs(call, b, "InputObject")) {
      if (!text.empty()) text += "\n";
      text += ToText(item);
    }
    std::string error;
    const auto value = ParseJson(text, error);
    if (!value) Fail("ConvertFrom-Json : " + error);
    Emit(out, *value);  // an array as one object, as Windows PowerShell 5.1 does
    return true;
  }
  if (is("Invoke-Expression")) {
    const Bound b = Bind(call, {{"Command", false, 0}});
    const Values commands = Inputs(call, b, "Command");
    for (const Value& command : commands) {
      const std::string text = ToText(command);
      const std::string origin = Where();
      const auto script = ParseOrThrow(text, origin + " (Invoke-Expression)", 1, 1);
      ExecStatements(*script, StatementsOf(script->Root()), out);
    }
    return true;
  }
  if (is("Get-Date")) {
    const Bound b = Bind(call, {{"Date", false, 0}, {"Format", false}, {"UFormat", false}});
    if (b.Has("Format") && ToText(b.Get("Format")) == "o" && !b.Has("Date")) {
      Emit(out, Value::String(host_.RoundTripNow()));
      return true;
    }
    Unsupported("Get-Date other than -Format o");
  }
  if (is("Start-Sleep")) {
    const Bound b = Bind(
        call, {{"Seconds", false, 0, false, {"s"}}, {"Milliseconds", false, -1, false, {"ms"}}});
    std::int64_t ms = 0;
    if (b.Has("Seconds")) ms = ToInteger(b.Get("Seconds")).value_or(0) * 1000;
    if (b.Has("Milliseconds")) ms = ToInteger(b.Get("Milliseconds")).value_or(0);
    host_.Sleep(std::chrono::milliseconds(ms));
    return true;
  }
  return false;
}

}  // namespace dxshim::test::node_standin::powershell
