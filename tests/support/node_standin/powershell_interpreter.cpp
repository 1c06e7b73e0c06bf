// Running scripts and script blocks: scopes, variables, parameters, errors and exit codes.
#include "tests/support/node_standin/powershell_interpreter.h"

#include <utility>

#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {

Value Bound::Get(const std::string& name) const {
  const auto it = values.find(name);
  return it == values.end() ? Value() : it->second;
}

Interpreter::Interpreter(Host& host) : host_(host), global_(std::make_shared<Scope>()) {
  frame_.scope = global_;
  frame_.script_scope = global_;
  global_->variables["ErrorActionPreference"] = Value::String("Continue");
  global_->variables["OFS"] = Value::String(" ");
  global_->variables["PSVersionTable"] = [] {
    auto table = NewHashtable();
    table->Set("PSVersion", Value::String("5.1.17763.1"));
    table->Set("PSEdition", Value::String("Desktop"));
    return Value::Object(table);
  }();
}

int Interpreter::Run(const std::function<void()>& body, bool command_mode) {
  int code = 0;
  last_failed_ = false;
  try {
    body();
    if (command_mode && last_failed_) code = 1;
  } catch (const ExitSignal& exit) {
    code = exit.code;
  } catch (const ReturnSignal&) {
  } catch (const BreakSignal&) {
  } catch (const ContinueSignal&) {
  } catch (const ScriptError& error) {
    host_.WriteError(error.message + "\r\nAt " + error.where + "\r\n");
    code = 1;
  } catch (const NotImplemented& missing) {
    not_implemented_ = missing.where + ": not implemented: " + missing.what;
    host_.WriteError("powershell stand-in: " + not_implemented_ + "\r\n");
    code = kNotImplementedExitCode;
  }
  return code;
}

int Interpreter::RunFile(const std::string& path, const std::vector<std::string>& args) {
  if (host_.KindOf(path) != PathKind::kFile) {
    host_.WriteError("The argument '" + path +
                     "' to the -File parameter does not exist. Provide the path to an existing "
                     "'.ps1' file as an argument to the -File parameter.\r\n");
    return -196608;  // what powershell.exe 5.1 exits with then
  }
  std::vector<CallArgument> arguments;
  for (const auto& arg : args) {
    CallArgument argument;
    if (arg.size() > 1 && arg[0] == '-') {
      argument.is_parameter = true;
      argument.name = arg.substr(1);
      argument.text = arg;
    } else {
      argument.has_value = true;
      argument.value = Value::String(arg);
    }
    arguments.push_back(std::move(argument));
  }
  Output out{nullptr, true};
  return Run([&] { RunScript(path, arguments, out, false); }, false);
}

int Interpreter::RunCommand(const std::string& text) {
  Output out{nullptr, true};
  return Run(
      [&] {
        const auto script = ParseOrThrow(text, "<command line>", 1, 1);
        ExecStatements(*script, StatementsOf(script->Root()), out);
      },
      true);
}

std::shared_ptr<const Script> Interpreter::ParseOrThrow(std::string text, const std::string& file,
                                                        std::uint32_t line, std::uint32_t column) {
  auto script = Script::Parse(std::move(text), file, line, column);
  if (const auto error = script->SyntaxError()) {
    // The grammar is not PowerShell's parser: what it cannot read may be valid PowerShell, so
    // this stops the script as unimplemented rather than as a PowerShell parse error.
    throw NotImplemented{file + ":" + std::to_string(line), *error};
  }
  return script;
}

void Interpreter::RunScriptFile(const std::string& path, const std::vector<CallArgument>& args,
                                Output& out, bool dot_source) {
  try {
    RunScript(path, args, out, dot_source);
  } catch (const ExitSignal& exit) {
    // `exit` ends the script it is in; its caller goes on with $LASTEXITCODE set.
    global_->variables["LASTEXITCODE"] = Value::Int(exit.code);
    last_failed_ = exit.code != 0;
  }
}

void Interpreter::RunScript(const std::string& path, const std::vector<CallArgument>& args,
                            Output& out, bool dot_source) {
  const auto bytes = host_.ReadFile(path);
  if (!bytes) Fail("The term '" + path + "' is not recognized: the file cannot be read.");
  const std::string full = host_.FullPath(path);
  const auto script = ParseOrThrow(DecodeText(*bytes), full, 1, 1);
  FrameGuard guard(*this);
  if (!dot_source) guard.Enter(true);
  const auto slash = full.find_last_of("\\/");
  frame_.scope->variables["PSScriptRoot"] =
      Value::String(slash == std::string::npos ? "" : full.substr(0, slash));
  frame_.scope->variables["PSCommandPath"] = Value::String(full);
  try {
    InvokeBlock({script, script->Root()}, TSNode{}, args, {}, false, false, false, out);
  } catch (const ReturnSignal&) {
  }
}

namespace {

// The statement list of a block and its param_block (or null nodes).
void BlockParts(TSNode node, TSNode& param_block, TSNode& statements) {
  param_block = FirstNamedChild(node, "param_block");
  if (Is(node, "script_block")) {
    const TSNode body = FieldOf(node, "script_block_body");
    if (!ts_node_is_null(body)) {
      statements = FieldOf(body, "statement_list");
      if (ts_node_is_null(statements)) statements = FirstNamedChild(body, "statement_list");
    }
    return;
  }
  statements = Is(node, "statement_block") ? FieldOf(node, "statement_list") : StatementsOf(node);
}

}  // namespace

void Interpreter::InvokeBlock(const Block& block, TSNode parameters,
                              const std::vector<CallArgument>& args, const Values& input,
                              bool has_input, bool filter, bool new_scope, Output& out) {
  FrameGuard guard(*this);
  if (new_scope) guard.Enter(false);
  TSNode param_block{};
  TSNode statements{};
  BlockParts(block.node, param_block, statements);
  if (Is(block.node, "script_block")) {
    for (const TSNode child : NamedChildrenOf(block.node)) {
      if (Is(child, "named_block_list") || Is(child, "named_block")) {
        SetWhere(*block.script, child);
        Unsupported("begin/process/end blocks");
      }
    }
  }
  if (!ts_node_is_null(param_block)) {
    parameters = FirstNamedChild(param_block, "parameter_list");
    if (ts_node_is_null(parameters)) parameters = param_block;
  }
  BindParameters(*block.script, parameters, args);
  frame_.scope->variables["input"] = Value::Array(input);
  if (ts_node_is_null(statements)) return;
  try {
    if (filter) {
      for (const Value& item : has_input ? input : Values{}) {
        frame_.scope->variables["_"] = item;
        ExecStatements(*block.script, statements, out);
      }
    } else {
      ExecStatements(*block.script, statements, out);
    }
  } catch (const ReturnSignal&) {
  }
}

void Interpreter::BindParameters(const Script& script, TSNode parameters,
                                 const std::vector<CallArgument>& args) {
  struct Param {
    std::string name;
    std::string type;
    TSNode default_value{};
    bool bound = false;
  };
  std::vector<Param> params;
  if (!ts_node_is_null(parameters)) {
    for (const TSNode p : NamedChildrenOf(parameters)) {
      if (!Is(p, "script_parameter")) continue;
      Param param;
      for (const TSNode part : NamedChildrenOf(p)) {
        if (Is(part, "variable")) param.name = script.TextOf(part).substr(1);
        if (Is(part, "script_parameter_default")) param.default_value = part;
        if (!Is(part, "attribute_list")) continue;
        for (const TSNode attribute : NamedChildrenOf(part)) {
          const TSNode type = FirstNamedChild(attribute, "type_literal");
          if (!ts_node_is_null(type)) {
            param.type = LowerAscii(script.TextOf(type));
            param.type = param.type.substr(1, param.type.size() - 2);
          }
        }
      }
      params.push_back(param);
    }
  }
  const auto convert = [this](const Param& param, Value value) -> Value {
    const std::string& t = param.type;
    if (t.empty() || t == "object") return value;
    if (t == "switch" || t == "bool") return Value::Bool(ToBool(value));
    if (t == "string[]") {
      Values items;
      for (const Value& item : Enumerate(value, false))
        items.push_back(Value::String(ToText(item)));
      return Value::Array(std::move(items));
    }
    if (t == "array" || t == "object[]") return Value::Array(Enumerate(value, false));
    return Cast(t, value);
  };
  const auto find = [&params](const std::string& name) -> Param* {
    Param* prefix = nullptr;
    int matches = 0;
    for (auto& param : params) {
      if (EqualsNoCase(param.name, name)) return &param;
      if (param.name.size() > name.size() &&
          EqualsNoCase(param.name.substr(0, name.size()), name)) {
        prefix = &param;
        ++matches;
      }
    }
    return matches == 1 ? prefix : nullptr;
  };
  Values positional;
  Values leftover;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const CallArgument& arg = args[i];
    if (!arg.is_parameter) {
      positional.push_back(arg.value);
      continue;
    }
    Param* param = find(arg.name);
    if (!param) {  // a simple function's unknown -name is one of its $args
      leftover.push_back(Value::String(arg.text));
      if (arg.has_value) leftover.push_back(arg.value);
      continue;
    }
    Value value;
    if (param->type == "switch") {
      value = arg.has_value ? Value::Bool(ToBool(arg.value)) : Value::Bool(true);
    } else if (arg.has_value) {
      value = arg.value;
    } else if (i + 1 < args.size() && !args[i + 1].is_parameter) {
      value = args[++i].value;
    } else {
      Fail("Missing an argument for parameter '" + param->name + "'.");
    }
    frame_.scope->variables[param->name] = convert(*param, value);
    param->bound = true;
  }
  std::size_t next = 0;
  for (auto& param : params) {
    if (param.bound || param.type == "switch") continue;
    if (next < positional.size()) {
      frame_.scope->variables[param.name] = convert(param, positional[next++]);
      param.bound = true;
    }
  }
  for (; next < positional.size(); ++next) leftover.push_back(positional[next]);
  for (auto& param : params) {
    if (param.bound) continue;
    Value value = param.type == "switch" ? Value::Bool(false) : Value();
    if (!ts_node_is_null(param.default_value)) {
      const auto children = NamedChildrenOf(param.default_value);
      if (!children.empty()) value = Eval(script, children.back());
    }
    frame_.scope->variables[param.name] = value.IsNull() ? value : convert(param, value);
  }
  frame_.scope->variables["args"] = Value::Array(std::move(leftover));
}

Block Interpreter::BlockOf(const ScriptBlockData& data) {
  if (!data.parsed)
    data.parsed = ParseOrThrow(data.text, data.file, data.first_line, data.first_column);
  return Block{data.parsed, data.parsed->Root()};
}

void Interpreter::InvokeScriptBlockHere(const Value& block, const Value& dollar_underscore,
                                        Output& out) {
  if (block.kind != Value::Kind::kScriptBlock) Fail("The argument is not a script block.");
  const Block body = BlockOf(*block.block);
  if (!ts_node_is_null(FirstNamedChild(body.node, "param_block"))) {
    Unsupported("a param() block in a ForEach-Object or Where-Object script block");
  }
  const TSNode statements = StatementsOf(body.node);
  const auto previous = frame_.scope->variables.find("_");
  const bool had = previous != frame_.scope->variables.end();
  const Value saved = had ? previous->second : Value();
  frame_.scope->variables["_"] = dollar_underscore;
  const auto restore = [this, had, &saved] {
    if (had) {
      frame_.scope->variables["_"] = saved;
    } else {
      frame_.scope->variables.erase("_");
    }
  };
  try {
    if (!ts_node_is_null(statements)) ExecStatements(*body.script, statements, out);
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

namespace {

// `scope:name` split; SCOPE is lower case ("" when none).
void SplitName(const std::string& full, std::string& scope, std::string& name) {
  const auto colon = full.find(':');
  if (colon == std::string::npos) {
    scope.clear();
    name = full;
    return;
  }
  scope = LowerAscii(full.substr(0, colon));
  name = full.substr(colon + 1);
}

}  // namespace

Value Interpreter::GetVariable(const std::string& full, bool required) {
  std::string scope;
  std::string name;
  SplitName(full, scope, name);
  const std::string lower = LowerAscii(name);
  if (scope.empty() || scope == "global" || scope == "script" || scope == "local") {
    if (lower == "null") return Value();
    if (lower == "true") return Value::Bool(true);
    if (lower == "false") return Value::Bool(false);
    if (lower == "?") return Value::Bool(!last_failed_);
    if (lower == "pwd") return Value::String(host_.CurrentDirectory());
    if (lower == "psitem") return GetVariable("_");
  }
  if (scope == "env") {
    const auto value = host_.GetEnvironment(name);
    return value ? Value::String(*value) : Value();
  }
  std::shared_ptr<Scope> at;
  if (scope == "global") {
    at = global_;
  } else if (scope == "script") {
    at = frame_.script_scope;
  } else if (scope == "local" || scope == "private") {
    const auto it = frame_.scope->variables.find(name);
    return it == frame_.scope->variables.end() ? Value() : it->second;
  } else if (!scope.empty()) {
    Unsupported("the variable $" + full + " (a provider path)");
  } else {
    at = frame_.scope;
  }
  for (; at; at = scope.empty() ? at->parent : nullptr) {
    const auto it = at->variables.find(name);
    if (it != at->variables.end()) return it->second;
  }
  if (required && strict_) {
    Fail("The variable '$" + name + "' cannot be retrieved because it has not been set.");
  }
  return Value();
}

void Interpreter::SetVariable(const std::string& full, Value value) {
  std::string scope;
  std::string name;
  SplitName(full, scope, name);
  const std::string lower = LowerAscii(name);
  if (lower == "null" && scope.empty()) return;
  if (lower == "true" || lower == "false" || lower == "?") {
    Fail("Cannot overwrite variable " + name + " because it is read-only or constant.");
  }
  if (scope == "env") {
    const std::string text = ToText(value);
    host_.SetEnvironment(name, text.empty() ? std::nullopt : std::optional<std::string>(text));
    return;
  }
  if (scope == "global") {
    global_->variables[name] = std::move(value);
  } else if (scope == "script") {
    frame_.script_scope->variables[name] = std::move(value);
  } else if (scope.empty() || scope == "local" || scope == "private") {
    frame_.scope->variables[name] = std::move(value);
  } else {
    Unsupported("assigning the variable $" + full);
  }
}

std::shared_ptr<const FunctionDef> Interpreter::FindFunction(const std::string& name) {
  for (auto at = frame_.scope; at; at = at->parent) {
    const auto it = at->functions.find(name);
    if (it != at->functions.end()) return it->second;
  }
  return nullptr;
}

void Interpreter::DefineFunction(std::shared_ptr<const FunctionDef> function) {
  frame_.scope->functions[function->name] = std::move(function);
}

void Interpreter::Unsupported(const std::string& what) { throw NotImplemented{where_, what}; }

void Interpreter::Fail(const std::string& message) {
  throw ScriptError{message, where_, false, Value::String(message)};
}

std::string Interpreter::ErrorActionPreference() {
  return ToText(GetVariable("ErrorActionPreference"));
}

void Interpreter::WriteError(const std::string& command, const std::string& message,
                             const std::string& error_action) {
  const std::string action =
      LowerAscii(error_action.empty() ? ErrorActionPreference() : error_action);
  last_failed_ = true;
  if (action == "stop") {
    throw ScriptError{command + " : " + message, where_, true, Value::String(message)};
  }
  if (action == "silentlycontinue" || action == "ignore") return;
  if (action != "continue") Unsupported("-ErrorAction / $ErrorActionPreference " + action);
  host_.WriteError(command + " : " + message + "\r\nAt " + where_ + "\r\n");
}

}  // namespace dxshim::test::node_standin::powershell
