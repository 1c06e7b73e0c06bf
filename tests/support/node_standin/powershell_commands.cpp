// Commands: reading their words, finding what a name means (alias, function, cmdlet, script,
// program), binding cmdlet parameters, running native programs, redirecting output to files.
#include <cctype>
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_native_arguments.h"
#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {

namespace {

// Windows PowerShell 5.1's aliases of the cmdlets this stand-in implements (Get-Alias).
const char* AliasTarget(const std::string& name) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"?", "Where-Object"},        {"where", "Where-Object"},
      {"%", "ForEach-Object"},      {"foreach", "ForEach-Object"},
      {"ipmo", "Import-Module"},    {"select", "Select-Object"},
      {"echo", "Write-Output"},     {"write", "Write-Output"},
      {"sleep", "Start-Sleep"},     {"gc", "Get-Content"},
      {"cat", "Get-Content"},       {"type", "Get-Content"},
      {"sc", "Set-Content"},        {"ac", "Add-Content"},
      {"rm", "Remove-Item"},        {"del", "Remove-Item"},
      {"erase", "Remove-Item"},     {"rd", "Remove-Item"},
      {"rmdir", "Remove-Item"},     {"ri", "Remove-Item"},
      {"ni", "New-Item"},           {"md", "mkdir"},
      {"iex", "Invoke-Expression"}, {"gsv", "Get-Service"},
      {"sasv", "Start-Service"},    {"spsv", "Stop-Service"},
      {"tee", "Tee-Object"},        {"sls", "Select-String"}};
  for (const auto& [alias, target] : kAliases) {
    if (EqualsNoCase(name, alias)) return target;
  }
  return nullptr;
}

// Other built-in aliases of Windows PowerShell 5.1, whose cmdlets this stand-in lacks.
bool IsOtherAlias(const std::string& name) {
  static const char* const kOthers[] = {
      "ls",    "dir",  "gci",   "cd",    "chdir", "sl",      "cp",      "copy", "cpi",   "mv",
      "move",  "mi",   "ren",   "rni",   "pwd",   "gl",      "ps",      "gps",  "kill",  "spps",
      "start", "saps", "iwr",   "curl",  "wget",  "irm",     "measure", "sort", "group", "ft",
      "fl",    "gm",   "cls",   "clear", "h",     "history", "r",       "set",  "sv",    "gv",
      "nv",    "sp",   "gp",    "gi",    "ii",    "si",      "compare", "diff", "gcm",   "icm",
      "nal",   "sal",  "epal",  "ipal",  "gal",   "clc",     "cli",     "clp",  "clv",   "cvpa",
      "dbp",   "ebp",  "epcsv", "ipcsv", "fc",    "fw",      "gbp",     "gdr",  "ghy",   "gjb",
      "gmo",   "gp",   "gpv",   "gsn",   "gu",    "gwmi",    "iwmi",    "lp",   "mount", "mp",
      "nmo",   "nsn",  "ogv",   "popd",  "pushd", "rbp",     "rcjb",    "rdr",  "rjb",   "rmo",
      "rp",    "rsn",  "rv",    "rvpa",  "sajb",  "sbp",     "scb",     "shcm", "spjb",  "swmi",
      "trcm",  "wjb",  "asnp",  "gsnp",  "rsnp",  "sujb",    "rujb",    "gin",  "gtz",   "stz",
      "oh",    "ise"};
  for (const char* other : kOthers) {
    if (EqualsNoCase(name, other)) return true;
  }
  return false;
}

// Verb-Noun: the shape of a cmdlet's (or a module function's) name.
bool LooksLikeCmdlet(const std::string& name) {
  const auto dash = name.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 >= name.size()) return false;
  for (const char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
  }
  return std::isalpha(static_cast<unsigned char>(name[0])) != 0;
}

bool HasFolder(const std::string& name) { return name.find_first_of("\\/:") != std::string::npos; }

bool EndsWithNoCase(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         EqualsNoCase(text.substr(text.size() - suffix.size()), suffix);
}

}  // namespace

Value Interpreter::EvalItem(const Script& script, const ArgumentItem& item) {
  switch (item.kind) {
    case ArgumentItem::Kind::kWord: {
      std::string text;
      for (const WordPart& part : item.parts) {
        switch (part.kind) {
          case WordPart::Kind::kText:
            text += part.text;
            break;
          case WordPart::Kind::kVariable:
            text += ToText(GetVariable(part.text));
            break;
          case WordPart::Kind::kSubExpression: {
            const auto fragment = Fragment(part.text, script, part.offset);
            text += ToText(Collapse(Collect(*fragment, StatementsOf(fragment->Root()))));
            break;
          }
          case WordPart::Kind::kExpandable:
            text += ToText(ExpandString(part.text, script, part.offset));
            break;
        }
      }
      return Value::String(text);
    }
    case ArgumentItem::Kind::kNumber: {
      const auto number = ToNumber(Value::String(item.text));
      return number ? *number : Value::String(item.text);
    }
    case ArgumentItem::Kind::kExpression:
      return EvalFragment(item.source, script, item.offset);
    case ArgumentItem::Kind::kScriptBlock: {
      auto data = std::make_shared<ScriptBlockData>();
      data->text = item.source;
      data->file = script.File();
      script.PositionOf(item.offset, data->first_line, data->first_column);
      return Value::Block(data);
    }
    case ArgumentItem::Kind::kSplat:
      break;
  }
  Unsupported("splatting @" + item.source + " inside a comma list");
}

std::vector<CallArgument> Interpreter::EvalArguments(const Script& script,
                                                     const CommandSyntax& syntax,
                                                     std::vector<CommandToken>& redirections) {
  std::vector<CallArgument> arguments;
  for (std::size_t t = 1; t < syntax.tokens.size(); ++t) {
    const CommandToken& token = syntax.tokens[t];
    CallArgument argument;
    switch (token.kind) {
      case CommandToken::Kind::kRedirection:
        redirections.push_back(token);
        continue;
      case CommandToken::Kind::kVerbatim: {
        // --%: the rest of the line as it is, %NAME% environment variables expanded.
        std::string rest = token.text.substr(3);
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.erase(0, 1);
        std::string expanded;
        for (std::size_t i = 0; i < rest.size(); ++i) {
          const auto close = rest[i] == '%' ? rest.find('%', i + 1) : std::string::npos;
          const auto value = close == std::string::npos
                                 ? std::nullopt
                                 : host_.GetEnvironment(rest.substr(i + 1, close - i - 1));
          if (value) {
            expanded += *value;
            i = close;
          } else {
            expanded += rest[i];
          }
        }
        argument.verbatim = true;
        argument.has_value = true;
        argument.value = Value::String(expanded);
        break;
      }
      case CommandToken::Kind::kParameter:
        argument.is_parameter = true;
        argument.name = token.parameter;
        argument.text = "-" + token.parameter + (token.colon ? ":" : "");
        argument.colon = token.colon;
        argument.space_after = token.space_after;
        if (token.colon) {
          argument.has_value = true;
          argument.value = EvalItem(script, token.items.front());
        }
        break;
      case CommandToken::Kind::kArgument:
        if (token.items.size() == 1 && token.items[0].kind == ArgumentItem::Kind::kSplat) {
          const Value splatted = GetVariable(token.items[0].source);
          if (splatted.kind == Value::Kind::kObject && splatted.object->hashtable) {
            for (const auto& [key, value] : splatted.object->members) {
              CallArgument named;
              named.is_parameter = true;
              named.name = key;
              named.text = "-" + key + ":";
              named.colon = true;
              named.has_value = true;
              named.value = value;
              arguments.push_back(std::move(named));
            }
          } else {
            for (const Value& value : Enumerate(splatted, false)) {
              CallArgument positional;
              positional.has_value = true;
              positional.value = value;
              arguments.push_back(std::move(positional));
            }
          }
          continue;
        }
        argument.has_value = true;
        if (token.items.size() == 1) {
          argument.value = EvalItem(script, token.items[0]);
        } else {
          Values items;
          for (const auto& item : token.items) items.push_back(EvalItem(script, item));
          argument.value = Value::Array(std::move(items));
          argument.comma_list = true;
        }
        break;
    }
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

void Interpreter::ExecCommand(const Script& script, TSNode node, const Values& input,
                              bool has_input, Output& out) {
  SetWhere(script, node);
  auto cached = script.commands.find(ts_node_start_byte(node));
  if (cached == script.commands.end()) {
    std::string error;
    std::uint32_t at = 0;
    const std::uint32_t start = ts_node_start_byte(node);
    const auto end = script.CommandEnd(start);
    if (!end) Unsupported("the command `" + script.TextOf(node).substr(0, 60) + "`");
    auto syntax = TokenizeCommand(script.Text(), start, *end, error, at);
    if (!syntax) {
      where_ = script.WhereOffset(at);
      Unsupported("the command `" + script.TextOf(node).substr(0, 60) + "`: " + error);
    }
    cached = script.commands.emplace(start, std::move(*syntax)).first;
  }
  const CommandSyntax& syntax = cached->second;
  const CommandToken& first = syntax.tokens.front();
  if (first.kind != CommandToken::Kind::kArgument || first.items.size() != 1) {
    Unsupported("the command name `" + first.text + "`");
  }
  Value name;
  if (syntax.invocation == CommandSyntax::Invocation::kNone) {
    // A name that starts with a digit is an expression the grammar took for a command (1..3).
    if (first.items[0].kind != ArgumentItem::Kind::kWord ||
        std::isdigit(static_cast<unsigned char>(first.text[0]))) {
      Unsupported("the command name `" + first.text + "`");
    }
    name = EvalItem(script, first.items[0]);
  } else {
    name = EvalItem(script, first.items[0]);
  }
  std::vector<CommandToken> redirections;
  Call call;
  call.arguments = EvalArguments(script, syntax, redirections);
  call.input = input;
  call.has_input = has_input;
  call.out = &out;
  // `> file` and `>> file`: the command's output goes to the file, as Out-File writes it.
  Values redirected;
  Output to_file{&redirected, false};
  std::optional<std::string> file;
  bool append = false;
  for (const CommandToken& redirection : redirections) {
    SetWhere(script, node);
    if (redirection.merge_to != 0 || redirection.stream != 1) {
      Unsupported("the redirection `" + redirection.text + "`");
    }
    const Value target = EvalItem(script, redirection.items.front());
    call.out = &to_file;
    file = target.IsNull() ? std::optional<std::string>() : ToText(target);
    append = redirection.append;
  }
  SetWhere(script, node);
  Invoke(name, call, syntax.invocation == CommandSyntax::Invocation::kDotSource);
  if (file) WriteFileText(*file, redirected, "unicode", append, "Out-File", "");
}

void Interpreter::Invoke(const Value& command, Call& call, bool dot_source) {
  if (command.kind == Value::Kind::kScriptBlock) {
    const Block block = BlockOf(*command.block);
    InvokeBlock(block, TSNode{}, call.arguments, call.input, call.has_input, false, !dot_source,
                *call.out);
    return;
  }
  std::string name = ToText(command);
  call.name = name;
  if (name.empty())
    Fail(
        "The expression after '&' in a pipeline element produced an object "
        "that was not valid. It must result in a command name, a script "
        "block, or a CommandInfo object.");
  if (!HasFolder(name)) {
    if (const char* target = AliasTarget(name)) name = target;
    if (const auto function = FindFunction(name)) {
      InvokeBlock(function->body, function->parameters, call.arguments, call.input, call.has_input,
                  function->filter, !dot_source, *call.out);
      return;
    }
    if (InvokeCmdlet(name, call)) return;
    if (IsOtherAlias(name)) Unsupported("the alias " + name);
  }
  const auto path = host_.FindProgram(name);
  if (!path) {
    if (!HasFolder(name) && LooksLikeCmdlet(name)) Unsupported("the command " + name);
    last_failed_ = true;
    Fail("The term '" + name +
         "' is not recognized as the name of a cmdlet, function, script "
         "file, or operable program. Check the spelling of the name, or if a path was included, "
         "verify that the path is correct and try again.");
  }
  if (EndsWithNoCase(*path, ".ps1")) {
    RunScriptFile(*path, call.arguments, *call.out, dot_source);
    return;
  }
  RunNative(*path, call);
}

bool Interpreter::InvokeCmdlet(const std::string& name, Call& call) {
  return OutputCmdlet(name, call) || FileCmdlet(name, call) || ItemCmdlet(name, call) ||
         ServiceCmdlet(name, call) || StubCmdlet(name, call);
}

void Interpreter::RunNative(const std::string& path, Call& call) {
  if (call.has_input && !call.input.empty()) Unsupported("piping objects into a program");
  std::vector<NativeArgument> arguments;
  for (const CallArgument& arg : call.arguments) {
    NativeArgument native;
    native.is_parameter = arg.is_parameter;
    native.parameter_text = arg.text;
    native.space_after = arg.space_after;
    native.has_value = arg.has_value;
    native.value = arg.value;
    native.comma_list = arg.comma_list;
    native.verbatim = arg.verbatim;
    arguments.push_back(std::move(native));
  }
  const std::string line = ProcessCommandLine(path, NativeArguments(arguments));
  // Its output is read only when something takes it (a pipe, an assignment, a redirection):
  // else the program writes to the console itself.
  const bool capture = !call.out->to_host;
  const ProgramRun run = host_.Run(line, "", capture, false);
  if (!run.started) {
    last_failed_ = true;
    Fail("Program '" + path.substr(path.find_last_of("\\/") + 1) + "' failed to run: error " +
         std::to_string(run.error));
  }
  global_->variables["LASTEXITCODE"] = Value::Int(run.exit_code);
  last_failed_ = run.exit_code != 0;
  if (!capture) return;
  for (const auto& text : SplitLines(run.output)) Emit(*call.out, Value::String(text));
}

Bound Interpreter::Bind(const Call& call, const std::vector<ParamSpec>& params) {
  Bound bound;
  static const std::vector<ParamSpec> kCommon = {{"ErrorAction", false, -1, false, {"ea"}},
                                                 {"WarningAction", false, -1, false, {"wa"}},
                                                 {"InformationAction", false, -1, false, {"infa"}},
                                                 {"Verbose", true, -1, false, {"vb"}},
                                                 {"Debug", true, -1, false, {"db"}},
                                                 {"Confirm", true, -1, false, {"cf"}},
                                                 {"WhatIf", true, -1, false, {"wi"}},
                                                 {"ErrorVariable", false, -1, false, {"ev"}},
                                                 {"OutVariable", false, -1, false, {"ov"}}};
  const auto find = [&](const std::string& given) -> const ParamSpec* {
    const ParamSpec* prefix = nullptr;
    int matches = 0;
    for (const auto* list : {&params, &kCommon}) {
      for (const ParamSpec& spec : *list) {
        if (EqualsNoCase(spec.name, given)) return &spec;
        for (const auto& alias : spec.aliases) {
          if (EqualsNoCase(alias, given)) return &spec;
        }
        if (spec.name.size() > given.size() &&
            EqualsNoCase(spec.name.substr(0, given.size()), given)) {
          prefix = &spec;
          ++matches;
        }
      }
    }
    return matches == 1 ? prefix : nullptr;
  };
  Values positional;
  for (std::size_t i = 0; i < call.arguments.size(); ++i) {
    const CallArgument& arg = call.arguments[i];
    if (!arg.is_parameter) {
      positional.push_back(arg.value);
      continue;
    }
    const ParamSpec* spec = find(arg.name);
    if (!spec) Unsupported(call.name + "'s parameter -" + arg.name);
    Value value;
    if (spec->is_switch) {
      value = arg.has_value ? Value::Bool(ToBool(arg.value)) : Value::Bool(true);
    } else if (arg.has_value) {
      value = arg.value;
    } else if (i + 1 < call.arguments.size() && !call.arguments[i + 1].is_parameter) {
      value = call.arguments[++i].value;
    } else {
      Fail(call.name + " : Missing an argument for parameter '" + spec->name +
           "'. Specify a parameter of the required type and try again.");
    }
    if (spec->name == "ErrorAction") {
      bound.error_action = ToText(value);
    } else if (spec->name == "WhatIf" || spec->name == "Confirm") {
      if (ToBool(value)) Unsupported(call.name + " -" + spec->name);
    } else if (spec->name == "ErrorVariable" || spec->name == "OutVariable" ||
               spec->name == "Debug" || spec->name == "InformationAction") {
      Unsupported(call.name + " -" + spec->name);
    } else if (spec->name != "Verbose" && spec->name != "WarningAction") {
      bound.values[spec->name] = value;
    }
  }
  std::vector<const ParamSpec*> by_position;
  const ParamSpec* remaining = nullptr;
  for (const ParamSpec& spec : params) {
    if (spec.remaining) remaining = &spec;
    if (spec.position >= 0) by_position.push_back(&spec);
  }
  std::size_t next = 0;
  for (int position = 0; next < positional.size() && position < 8; ++position) {
    for (const ParamSpec* spec : by_position) {
      if (spec->position != position || bound.Has(spec->name)) continue;
      if (spec->remaining) break;
      bound.values[spec->name] = positional[next++];
      break;
    }
  }
  if (next < positional.size()) {
    if (!remaining) {
      Unsupported(call.name + " with the positional argument `" + ToText(positional[next]) + "`");
    }
    for (; next < positional.size(); ++next) bound.remaining.push_back(positional[next]);
  }
  return bound;
}

void Interpreter::WriteFileText(const std::string& path, const Values& items,
                                const std::string& encoding, bool append,
                                const std::string& command, const std::string& error_action) {
  std::string text;
  for (const Value& item : items) text += ToText(item) + "\r\n";
  const auto existing = append ? host_.ReadFile(path) : std::nullopt;
  const bool bom = !(existing && !existing->empty());
  const auto bytes = EncodeText(text, encoding, bom);
  if (!bytes) Unsupported("the encoding " + encoding);
  std::string error;
  if (!host_.WriteFile(path, *bytes, append, error)) WriteError(command, error, error_action);
}

}  // namespace dxshim::test::node_standin::powershell
