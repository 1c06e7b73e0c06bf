// The PowerShell stand-in's interpreter: Windows PowerShell 5.1's semantics for the subset of the
// language and cmdlets that the kubelet scripts of kubeadm (sig-windows-tools, image-builder) and
// AKS (AgentBaker) use, over a Host (powershell_host.h) for everything that touches the system.
// Anything else a script uses stops it with NotImplemented naming the script, line and construct,
// so that a fixture cannot pass by running less than it says. Portable: no Windows header.
//
// The member functions are spread over files named for what they do: powershell_interpreter.cpp
// (running scripts, scopes and variables, errors), powershell_statements.cpp (statements and
// pipelines), powershell_expressions.cpp (expressions and strings), powershell_operators.cpp,
// powershell_members.cpp (properties, methods, .NET static calls), powershell_commands.cpp
// (finding and invoking commands, binding parameters, native programs),
// powershell_output_cmdlets.cpp, powershell_file_cmdlets.cpp, powershell_service_cmdlets.cpp and
// powershell_stub_cmdlets.cpp (the cmdlets).
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/node_standin/powershell_command_tokens.h"
#include "tests/support/node_standin/powershell_host.h"
#include "tests/support/node_standin/powershell_syntax.h"
#include "tests/support/node_standin/powershell_value.h"

namespace dxshim::test::node_standin::powershell {

// The exit code of a script stopped by something this stand-in does not implement.
constexpr int kNotImplementedExitCode = 70;

// A construct the stand-in does not implement: never caught by a script's try/catch.
struct NotImplemented {
  std::string where;  // FILE:LINE:COLUMN
  std::string what;
};

// A terminating error: statement-terminating (the statement stops, the script goes on unless
// $ErrorActionPreference is Stop) or script-terminating (throw, -ErrorAction Stop).
struct ScriptError {
  std::string message;
  std::string where;
  bool script_terminating = false;
  Value thrown;  // what `throw` threw
};

struct ReturnSignal {};
struct BreakSignal {};
struct ContinueSignal {};
struct ExitSignal {
  int code = 0;
};

struct NoCaseLess {
  bool operator()(const std::string& a, const std::string& b) const {
    return CompareNoCase(a, b) < 0;
  }
};

struct FunctionDef;

struct Scope {
  std::shared_ptr<Scope> parent;
  std::map<std::string, Value, NoCaseLess> variables;
  std::map<std::string, std::shared_ptr<const FunctionDef>, NoCaseLess> functions;
};

// A piece of script to run: a script file's program, a function's or a script block's body.
struct Block {
  std::shared_ptr<const Script> script;
  TSNode node{};  // program, script_block or statement_block
};

struct FunctionDef {
  std::string name;
  bool filter = false;
  Block body;
  TSNode parameters{};  // the parameter_list of `function f ($a, $b)`, or null
};

// Where a statement's output goes: collected into ITEMS, or rendered on the console as it comes
// (the script's own output, and what it calls with it, when nothing captures it). A native
// program writes to the console itself then, as PowerShell lets it.
struct Output {
  Values* items = nullptr;
  bool to_host = false;
};

// One evaluated command element.
struct CallArgument {
  bool is_parameter = false;
  std::string name;  // a parameter's name without its dash
  std::string text;  // as a native program gets it: `-name` or `-name:`
  bool colon = false;
  bool space_after = false;
  bool has_value = false;
  Value value;
  bool comma_list = false;
  bool verbatim = false;  // the text after --%
};

// A command being invoked.
struct Call {
  std::string name;  // as the script wrote it
  std::vector<CallArgument> arguments;
  Values input;
  bool has_input = false;  // a command after a `|`
  Output* out = nullptr;
};

// A cmdlet's parameter for Bind: a switch or one that takes a value, by name (a unique prefix
// of it, case-insensitive) or at POSITION; REMAINING takes the positional values left over.
struct ParamSpec {
  ParamSpec(std::string name_, bool is_switch_ = false, int position_ = -1, bool remaining_ = false,
            std::vector<std::string> aliases_ = {})
      : name(std::move(name_)),
        is_switch(is_switch_),
        position(position_),
        remaining(remaining_),
        aliases(std::move(aliases_)) {}
  std::string name;
  bool is_switch;
  int position;
  bool remaining;
  std::vector<std::string> aliases;
};

struct Bound {
  std::map<std::string, Value, NoCaseLess> values;
  Values remaining;
  std::string error_action;  // -ErrorAction, when given
  bool Has(const std::string& name) const { return values.count(name) != 0; }
  Value Get(const std::string& name) const;
};

class Interpreter {
 public:
  explicit Interpreter(Host& host);

  // powershell.exe -File SCRIPT ARGS: the script's exit code (`exit N`; 1 after a terminating
  // error; 0 otherwise; kNotImplementedExitCode when it used what is not implemented).
  int RunFile(const std::string& path, const std::vector<std::string>& args);
  // powershell.exe -Command TEXT: `exit N`, else 1 when the last statement failed, else 0.
  int RunCommand(const std::string& text);

  // The message of the NotImplemented that stopped the last run ("" if none).
  const std::string& NotImplementedMessage() const { return not_implemented_; }

  // ---- used by the member functions in the other files ----
  Host& host() { return host_; }

  // Scripts and blocks (powershell_interpreter.cpp).
  std::shared_ptr<const Script> ParseOrThrow(std::string text, const std::string& file,
                                             std::uint32_t line, std::uint32_t column);
  void RunScriptFile(const std::string& path, const std::vector<CallArgument>& args, Output& out,
                     bool dot_source);
  void InvokeBlock(const Block& block, TSNode parameters, const std::vector<CallArgument>& args,
                   const Values& input, bool has_input, bool filter, bool new_scope, Output& out);
  void InvokeScriptBlockHere(const Value& block, const Value& dollar_underscore, Output& out);
  Block BlockOf(const ScriptBlockData& data);

  // Variables.
  // REQUIRED: a script's own read, which Set-StrictMode refuses for a variable never set.
  Value GetVariable(const std::string& name, bool required = false);
  void SetVariable(const std::string& name, Value value);
  std::shared_ptr<const FunctionDef> FindFunction(const std::string& name);
  void DefineFunction(std::shared_ptr<const FunctionDef> function);
  bool& last_failed() { return last_failed_; }
  int& try_depth() { return try_depth_; }

  // Errors.
  [[noreturn]] void Unsupported(const std::string& what);
  [[noreturn]] void Fail(const std::string& message);  // statement-terminating
  void WriteError(const std::string& command, const std::string& message,
                  const std::string& error_action);
  std::string ErrorActionPreference();
  const std::string& Where() const { return where_; }
  void SetWhere(const Script& script, TSNode node) { where_ = script.Where(node); }

  // Statements (powershell_statements.cpp).
  void ExecStatements(const Script& script, TSNode list, Output& out);
  void ExecStatement(const Script& script, TSNode statement, Output& out);
  void ExecPipeline(const Script& script, TSNode pipeline, Output& out);
  void ExecChain(const Script& script, TSNode chain, Output& out);
  void ExecTry(const Script& script, TSNode node, Output& out);
  Value PipelineValue(const Script& script, TSNode pipeline);
  Values Collect(const Script& script, TSNode statements);
  void Emit(Output& out, const Value& value);
  void EmitEnumerated(Output& out, const Value& value);
  void Render(const Value& value);

  // Expressions (powershell_expressions.cpp).
  Value Eval(const Script& script, TSNode node);
  Value ExpandString(const std::string& source, const Script& script, std::uint32_t offset);
  Value EvalFragment(const std::string& source, const Script& script, std::uint32_t offset);
  void Assign(const Script& script, TSNode target, const std::string& op, Value value);

  // Operators (powershell_operators.cpp).
  Value BinaryOperator(const std::string& op, const Value& left, const Value& right);
  Value UnaryOperator(const std::string& op, const Value& operand);
  Value Add(const Value& left, const Value& right);
  Value Cast(const std::string& type, const Value& value);
  Value VersionValue(const std::string& text);

  // Members (powershell_members.cpp).
  Value GetMember(const Value& target, const std::string& name);
  void SetMember(const Value& target, const std::string& name, Value value);
  Value CallMethod(const Value& target, const std::string& name, const Values& args);
  Value GetStatic(const std::string& type, const std::string& name);
  void SetStatic(const std::string& type, const std::string& name, Value value);
  Value CallStatic(const std::string& type, const std::string& name, const Values& args);
  Value Index(const Value& target, const Value& index);

  // Commands (powershell_commands.cpp).
  void ExecCommand(const Script& script, TSNode command, const Values& input, bool has_input,
                   Output& out);
  void Invoke(const Value& command, Call& call, bool dot_source);
  bool InvokeCmdlet(const std::string& name, Call& call);
  void RunNative(const std::string& path, Call& call);
  Bound Bind(const Call& call, const std::vector<ParamSpec>& params);
  void WriteFileText(const std::string& path, const Values& items, const std::string& encoding,
                     bool append, const std::string& command, const std::string& error_action);

  // The cmdlets (one group per file).
  bool OutputCmdlet(const std::string& name, Call& call);
  bool FileCmdlet(const std::string& name, Call& call);
  bool ServiceCmdlet(const std::string& name, Call& call);
  bool StubCmdlet(const std::string& name, Call& call);
  bool ItemCmdlet(const std::string& name, Call& call);
  bool strict() const { return strict_; }

  bool run_process_loaded = false;  // Add-Type of run-process.cs happened

 private:
  struct Frame {
    std::shared_ptr<Scope> scope;
    std::shared_ptr<Scope> script_scope;
  };

  int Run(const std::function<void()>& body, bool command_mode);
  void RunScript(const std::string& path, const std::vector<CallArgument>& args, Output& out,
                 bool dot_source);
  std::vector<CallArgument> EvalArguments(const Script& script, const CommandSyntax& syntax,
                                          std::vector<CommandToken>& redirections);
  Value EvalItem(const Script& script, const ArgumentItem& item);
  std::shared_ptr<const Script> Fragment(const std::string& source, const Script& script,
                                         std::uint32_t offset);
  void BindParameters(const Script& script, TSNode parameters,
                      const std::vector<CallArgument>& args);

  Host& host_;
  std::shared_ptr<Scope> global_;
  Frame frame_;
  std::string where_ = "powershell.exe";
  std::string not_implemented_;
  int try_depth_ = 0;
  bool last_failed_ = false;
  bool strict_ = false;     // Set-StrictMode -Version Latest
  Value console_encoding_;  // [Console]::OutputEncoding, once set

  friend class FrameGuard;
  friend class TryGuard;
};

// Restores the interpreter's scope when a call returns.
class FrameGuard {
 public:
  explicit FrameGuard(Interpreter& interpreter)
      : interpreter_(interpreter), saved_(interpreter.frame_) {}
  ~FrameGuard() { interpreter_.frame_ = saved_; }
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;
  void Enter(bool script) {
    auto scope = std::make_shared<Scope>();
    scope->parent = interpreter_.frame_.scope;
    interpreter_.frame_.scope = scope;
    if (script) interpreter_.frame_.script_scope = scope;
  }

 private:
  Interpreter& interpreter_;
  Interpreter::Frame saved_;
};

class TryGuard {
 public:
  explicit TryGuard(Interpreter& interpreter) : interpreter_(interpreter) {
    ++interpreter_.try_depth_;
  }
  ~TryGuard() { --interpreter_.try_depth_; }
  TryGuard(const TryGuard&) = delete;
  TryGuard& operator=(const TryGuard&) = delete;

 private:
  Interpreter& interpreter_;
};

}  // namespace dxshim::test::node_standin::powershell
