// Statements (if, loops, try, flow control, functions) and pipelines.
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"

namespace dxshim::test::node_standin::powershell {

namespace {

// The first anonymous token's text (a keyword or an operator) among NODE's children.
std::string Keyword(const Script& script, TSNode node) {
  for (const TSNode child : ChildrenOf(node)) {
    if (!ts_node_is_named(child)) return LowerAscii(script.TextOf(child));
  }
  return "";
}

// The pipeline inside a for_initializer, while_condition or similar wrapper (or NODE itself).
TSNode PipelineIn(TSNode node) {
  if (ts_node_is_null(node) || Is(node, "pipeline")) return node;
  return FirstNamedChild(node, "pipeline");
}

bool IsIncrement(TSNode node) {
  while (ts_node_named_child_count(node) == 1 && ts_node_child_count(node) == 1) {
    node = ts_node_named_child(node, 0);
  }
  return Is(node, "post_increment_expression") || Is(node, "post_decrement_expression") ||
         Is(node, "pre_increment_expression") || Is(node, "pre_decrement_expression");
}

}  // namespace

void Interpreter::Emit(Output& out, const Value& value) {
  if (out.to_host) {
    Render(value);
  } else if (out.items) {
    out.items->push_back(value);
  }
}

void Interpreter::EmitEnumerated(Output& out, const Value& value) {
  for (const Value& item : Enumerate(value, true)) Emit(out, item);
}

void Interpreter::Render(const Value& value) {
  if (value.IsNull()) return;
  host_.WriteOutput(ToText(value) + "\r\n");
}

Values Interpreter::Collect(const Script& script, TSNode statements) {
  Values items;
  Output out{&items, false};
  if (!ts_node_is_null(statements)) ExecStatements(script, statements, out);
  return items;
}

void Interpreter::ExecStatements(const Script& script, TSNode list, Output& out) {
  for (const TSNode statement : NamedChildrenOf(list)) {
    try {
      ExecStatement(script, statement, out);
    } catch (const ScriptError& error) {
      // A statement-terminating error ends this statement only, unless a try around it (here
      // or in a caller) catches it, or $ErrorActionPreference is Stop.
      if (error.script_terminating || try_depth_ > 0) throw;
      if (EqualsNoCase(ErrorActionPreference(), "Stop")) {
        ScriptError stop = error;
        stop.script_terminating = true;
        throw stop;
      }
      host_.WriteError(error.message + "\r\nAt " + error.where + "\r\n");
      last_failed_ = true;
    }
  }
}

void Interpreter::ExecStatement(const Script& script, TSNode node, Output& out) {
  SetWhere(script, node);
  const std::string type = TypeOf(node);
  if (type == "pipeline") {
    ExecPipeline(script, node, out);
  } else if (type == "if_statement") {
    if (ToBool(PipelineValue(script, FieldOf(node, "condition")))) {
      ExecStatements(script, FieldOf(FirstNamedChild(node, "statement_block"), "statement_list"),
                     out);
      return;
    }
    const TSNode elseifs = FirstNamedChild(node, "elseif_clauses");
    if (!ts_node_is_null(elseifs)) {
      for (const TSNode clause : NamedChildrenOf(elseifs)) {
        if (ToBool(PipelineValue(script, FieldOf(clause, "condition")))) {
          ExecStatements(
              script, FieldOf(FirstNamedChild(clause, "statement_block"), "statement_list"), out);
          return;
        }
      }
    }
    const TSNode otherwise = FirstNamedChild(node, "else_clause");
    if (!ts_node_is_null(otherwise)) {
      ExecStatements(script,
                     FieldOf(FirstNamedChild(otherwise, "statement_block"), "statement_list"), out);
    }
  } else if (type == "for_statement") {
    const TSNode init = PipelineIn(FieldOf(node, "for_initializer"));
    const TSNode condition = PipelineIn(FieldOf(node, "for_condition"));
    const TSNode iterator = PipelineIn(FieldOf(node, "for_iterator"));
    const TSNode body = FieldOf(FirstNamedChild(node, "statement_block"), "statement_list");
    if (!ts_node_is_null(init)) ExecPipeline(script, init, out);
    while (ts_node_is_null(condition) || ToBool(PipelineValue(script, condition))) {
      try {
        ExecStatements(script, body, out);
      } catch (const BreakSignal&) {
        break;
      } catch (const ContinueSignal&) {
      }
      if (!ts_node_is_null(iterator)) ExecPipeline(script, iterator, out);
    }
  } else if (type == "foreach_statement") {
    const TSNode variable = FirstNamedChild(node, "variable");
    const std::string name = script.TextOf(variable).substr(1);
    const Value collection = PipelineValue(script, FirstNamedChild(node, "pipeline"));
    const TSNode body = FieldOf(FirstNamedChild(node, "statement_block"), "statement_list");
    for (const Value& item : Enumerate(collection, false)) {
      SetVariable(name, item);
      try {
        ExecStatements(script, body, out);
      } catch (const BreakSignal&) {
        break;
      } catch (const ContinueSignal&) {
      }
    }
  } else if (type == "while_statement" || type == "do_statement") {
    const TSNode condition = PipelineIn(FieldOf(node, "condition"));
    const TSNode body = FieldOf(FirstNamedChild(node, "statement_block"), "statement_list");
    bool until = false;
    for (const TSNode child : ChildrenOf(node)) {
      if (!ts_node_is_named(child) && LowerAscii(script.TextOf(child)) == "until") until = true;
    }
    const bool test_first = type == "while_statement";
    for (bool first = true;; first = false) {
      if (test_first || !first) {
        const bool holds = ToBool(PipelineValue(script, condition));
        if (holds == until) break;
      }
      try {
        ExecStatements(script, body, out);
      } catch (const BreakSignal&) {
        break;
      } catch (const ContinueSignal&) {
      }
    }
  } else if (type == "flow_control_statement") {
    const std::string keyword = Keyword(script, node);
    const TSNode pipeline = FirstNamedChild(node, "pipeline");
    if (keyword == "return") {
      if (!ts_node_is_null(pipeline)) ExecPipeline(script, pipeline, out);
      throw ReturnSignal{};
    }
    if (!ts_node_is_null(FirstNamedChild(node, "label_expression"))) Unsupported("a loop label");
    if (keyword == "break") throw BreakSignal{};
    if (keyword == "continue") throw ContinueSignal{};
    if (keyword == "exit") {
      const Value code =
          ts_node_is_null(pipeline) ? Value::Int(0) : PipelineValue(script, pipeline);
      throw ExitSignal{static_cast<int>(ToInteger(code).value_or(0))};
    }
    if (keyword == "throw") {
      if (ts_node_is_null(pipeline)) {
        const Value current = GetVariable("_");
        const std::string message = current.IsNull() ? "ScriptHalted" : ToText(current);
        throw ScriptError{message, where_, true, current};
      }
      const Value thrown = PipelineValue(script, pipeline);
      throw ScriptError{ToText(thrown), where_, true, thrown};
    }
    Unsupported("the statement `" + keyword + "`");
  } else if (type == "function_statement") {
    auto function = std::make_shared<FunctionDef>();
    function->filter = Keyword(script, node) == "filter";
    function->name = script.TextOf(FirstNamedChild(node, "function_name"));
    const TSNode declared = FirstNamedChild(node, "function_parameter_declaration");
    if (!ts_node_is_null(declared))
      function->parameters = FirstNamedChild(declared, "parameter_list");
    const TSNode body = FirstNamedChild(node, "script_block");
    // The function keeps the script it is written in alive.
    function->body = Block{script.shared_from_this(), ts_node_is_null(body) ? node : body};
    DefineFunction(function);
  } else if (type == "try_statement") {
    ExecTry(script, node, out);
  } else if (type == "ERROR") {
    ExecStatements(script, node, out);  // the grammar's recovery around a command line
  } else if (type == "command") {
    ExecCommand(script, node, {}, false, out);
  } else if (type == "pipeline_chain") {
    ExecChain(script, node, out);
  } else if (type == "empty_statement" || type == "comment" || type == "param_block") {
  } else {
    Unsupported("the statement " + type);
  }
}

void Interpreter::ExecTry(const Script& script, TSNode node, Output& out) {
  const TSNode body = FieldOf(FirstNamedChild(node, "statement_block"), "statement_list");
  const TSNode catches = FirstNamedChild(node, "catch_clauses");
  const TSNode finally = FirstNamedChild(node, "finally_clause");
  const auto run_finally = [&] {
    if (ts_node_is_null(finally)) return;
    ExecStatements(script, FieldOf(FirstNamedChild(finally, "statement_block"), "statement_list"),
                   out);
  };
  std::optional<ScriptError> caught;
  try {
    TryGuard guard(*this);
    ExecStatements(script, body, out);
  } catch (const ScriptError& error) {
    if (ts_node_is_null(catches)) {
      run_finally();
      throw;
    }
    caught = error;
  } catch (const NotImplemented&) {
    throw;
  } catch (...) {
    run_finally();
    throw;
  }
  if (caught) {
    const auto clauses = NamedChildrenOf(catches);
    const TSNode clause = clauses.front();
    if (!ts_node_is_null(FirstNamedChild(clause, "catch_type_list"))) {
      SetWhere(script, clause);
      Unsupported("a catch of a given exception type");
    }
    auto record = NewObject("System.Management.Automation.ErrorRecord", caught->message);
    record->Set("Exception", Value::String(caught->message));
    record->Set("TargetObject", caught->thrown);
    const Value previous = GetVariable("_");
    SetVariable("_", Value::Object(record));
    try {
      ExecStatements(script, FieldOf(FirstNamedChild(clause, "statement_block"), "statement_list"),
                     out);
    } catch (...) {
      SetVariable("_", previous);
      run_finally();
      throw;
    }
    SetVariable("_", previous);
  }
  run_finally();
}

void Interpreter::ExecPipeline(const Script& script, TSNode pipeline, Output& out) {
  SetWhere(script, pipeline);
  const TSNode first = ts_node_named_child(pipeline, 0);
  if (Is(first, "assignment_expression")) {
    const TSNode target = FirstNamedChild(first, "left_assignment_expression");
    const TSNode op = FirstNamedChild(first, "assignement_operator");
    const Value value = PipelineValue(script, FieldOf(first, "value"));
    Assign(script, target, LowerAscii(script.TextOf(op)), value);
    return;
  }
  if (!Is(first, "pipeline_chain")) Unsupported("the pipeline element " + TypeOf(first));
  ExecChain(script, first, out);
}

void Interpreter::ExecChain(const Script& script, TSNode first, Output& out) {
  std::vector<TSNode> stages;
  TSNode redirections{};
  for (const TSNode child : ChildrenOf(first)) {
    if (!ts_node_is_named(child)) {
      const std::string token = script.TextOf(child);
      if (token != "|") Unsupported("the pipeline operator " + token);
      continue;
    }
    if (Is(child, "comment")) continue;
    if (Is(child, "redirections")) {
      redirections = child;
    } else {
      stages.push_back(child);
    }
  }
  Values input;
  bool has_input = false;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const bool last = i + 1 == stages.size();
    Values collected;
    Output captured{&collected, false};
    Output& target = last && ts_node_is_null(redirections) ? out : captured;
    if (Is(stages[i], "command")) {
      ExecCommand(script, stages[i], input, has_input, target);
    } else {
      if (i != 0) Unsupported("an expression after a | in a pipeline");
      const Value value = Eval(script, stages[i]);
      if (!IsIncrement(stages[i])) EmitEnumerated(target, value);
    }
    input = std::move(collected);
    has_input = true;
  }
  if (ts_node_is_null(redirections)) return;
  // `expression > file`: the output written as Out-File writes it (UTF-16).
  for (const TSNode redirection : NamedChildrenOf(redirections)) {
    const std::string op = script.TextOf(FirstNamedChild(redirection, "file_redirection_operator"));
    if (op != ">" && op != ">>" && op != "1>" && op != "1>>") Unsupported("the redirection " + op);
    const TSNode file = FirstNamedChild(redirection, "redirected_file_name");
    Value name;
    for (const TSNode part : NamedChildrenOf(file)) {
      if (Is(part, "command_argument_sep")) continue;
      // A bare file name is a word of command mode, as a command's argument would be.
      name = Is(part, "generic_token") ? Value::String(script.TextOf(part)) : Eval(script, part);
    }
    if (name.IsNull()) return;  // > $null
    WriteFileText(ToText(name), input, "unicode", op.find(">>") != std::string::npos, "Out-File",
                  "");
  }
}

Value Interpreter::PipelineValue(const Script& script, TSNode pipeline) {
  if (ts_node_is_null(pipeline)) return Value();
  if (!Is(pipeline, "pipeline")) {  // `$x = if (...) {...}`: a statement's output as the value
    Values items;
    Output out{&items, false};
    ExecStatement(script, pipeline, out);
    return Collapse(std::move(items));
  }
  const TSNode first = ts_node_named_child(pipeline, 0);
  if (Is(first, "pipeline_chain") && ts_node_named_child_count(first) == 1 &&
      !Is(ts_node_named_child(first, 0), "command")) {
    return Eval(script, ts_node_named_child(first, 0));  // an expression: its value as it is
  }
  if (Is(first, "assignment_expression")) Unsupported("an assignment used as a value");
  Values items;
  Output out{&items, false};
  ExecPipeline(script, pipeline, out);
  return Collapse(std::move(items));
}

}  // namespace dxshim::test::node_standin::powershell
