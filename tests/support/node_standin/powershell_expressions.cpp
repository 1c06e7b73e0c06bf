// Expressions: literals, variables, strings, operators, members, casts, assignments.
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"

namespace dxshim::test::node_standin::powershell {

namespace {

// The wrapper nodes the grammar nests every expression in; with one child they are that child.
bool IsWrapper(const std::string& type) {
  static const char* const kWrappers[] = {"logical_expression",
                                          "bitwise_expression",
                                          "comparison_expression",
                                          "additive_expression",
                                          "multiplicative_expression",
                                          "format_expression",
                                          "range_expression",
                                          "array_literal_expression",
                                          "unary_expression",
                                          "logical_argument_expression",
                                          "bitwise_argument_expression",
                                          "comparison_argument_expression",
                                          "additive_argument_expression",
                                          "multiplicative_argument_expression",
                                          "format_argument_expression",
                                          "range_argument_expression",
                                          "argument_expression",
                                          "left_assignment_expression",
                                          "key_expression",
                                          "expression_with_unary_operator"};
  for (const char* wrapper : kWrappers) {
    if (type == wrapper) return true;
  }
  return false;
}

// NODE without its single-child wrappers.
TSNode Unwrap(TSNode node) {
  while (IsWrapper(TypeOf(node)) && ts_node_child_count(node) == 1) {
    node = ts_node_child(node, 0);
  }
  return node;
}

std::string VariableName(const std::string& text) {
  std::string name = text.substr(1);  // the $
  if (name.size() >= 2 && name.front() == '{' && name.back() == '}') {
    name = name.substr(1, name.size() - 2);
  }
  return name;
}

std::string TypeNameOf(const Script& script, TSNode type_literal) {
  std::string text = script.TextOf(type_literal);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

Value Multiplied(const std::string& text) {
  // An integer literal, with PowerShell's kb/mb/gb/tb/pb multipliers and l/d suffixes.
  std::string digits = text;
  std::int64_t multiplier = 1;
  const std::string lower = LowerAscii(text);
  static const std::pair<const char*, std::int64_t> kMultipliers[] = {{"kb", 1LL << 10},
                                                                      {"mb", 1LL << 20},
                                                                      {"gb", 1LL << 30},
                                                                      {"tb", 1LL << 40},
                                                                      {"pb", 1LL << 50}};
  for (const auto& [suffix, factor] : kMultipliers) {
    if (lower.size() > 2 && lower.compare(lower.size() - 2, 2, suffix) == 0) {
      digits = text.substr(0, text.size() - 2);
      multiplier = factor;
    }
  }
  if (!digits.empty() && (digits.back() == 'l' || digits.back() == 'L')) digits.pop_back();
  const auto number = ToNumber(Value::String(digits));
  if (!number) return Value::String(text);
  if (number->kind == Value::Kind::kInt) return Value::Int(number->integer * multiplier);
  return Value::Real(number->real * static_cast<double>(multiplier));
}

}  // namespace

std::shared_ptr<const Script> Interpreter::Fragment(const std::string& source, const Script& script,
                                                    std::uint32_t offset) {
  const auto found = script.fragments.find(offset);
  if (found != script.fragments.end() && found->second->Text() == source) return found->second;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  script.PositionOf(offset, line, column);
  auto parsed = ParseOrThrow(source, script.File(), line, column);
  script.fragments[offset] = parsed;
  return parsed;
}

Value Interpreter::EvalFragment(const std::string& source, const Script& script,
                                std::uint32_t offset) {
  const auto fragment = Fragment(source, script, offset);
  const TSNode statements = StatementsOf(fragment->Root());
  const auto list =
      ts_node_is_null(statements) ? std::vector<TSNode>{} : NamedChildrenOf(statements);
  if (list.size() != 1 || !Is(list.front(), "pipeline")) {
    Unsupported("the argument `" + source + "`");
  }
  return PipelineValue(*fragment, list.front());
}

Value Interpreter::ExpandString(const std::string& s, const Script& script, std::uint32_t offset) {
  const std::string separator = ToText(GetVariable("OFS"));
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '`' && i + 1 < s.size()) {
      out += BacktickChar(s[i + 1]);
      i += 2;
    } else if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
      out += '"';
      i += 2;
    } else if (c == '$' && i + 1 < s.size() && s[i + 1] == '(') {
      const std::size_t close = SkipGroup(s, i + 1);
      if (close == std::string::npos) Unsupported("an unclosed $( in a string");
      const std::string inner = s.substr(i + 2, close - i - 3);
      const auto fragment = Fragment(inner, script, offset + static_cast<std::uint32_t>(i) + 2);
      const Value value = Collapse(Collect(*fragment, StatementsOf(fragment->Root())));
      out += ToText(value, separator);
      i = close;
    } else if (c == '$') {
      std::size_t next = 0;
      const auto name = ScanVariable(s, i, next);
      if (name) {
        out += ToText(GetVariable(*name), separator);
        i = next;
      } else {
        out += c;
        ++i;
      }
    } else {
      out += c;
      ++i;
    }
  }
  return Value::String(out);
}

namespace {

std::string VerbatimString(const std::string& text) {
  std::string out;
  for (std::size_t i = 1; i + 1 < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\'' && text[i + 1] == '\'') ++i;
  }
  return out;
}

// The lines between a here-string's header line and its footer line.
std::string HereStringBody(const std::string& text) {
  const auto start = text.find('\n');
  const auto end = text.rfind('\n');
  if (start == std::string::npos || end <= start) return "";
  std::string body = text.substr(start + 1, end - start - 1);
  if (!body.empty() && body.back() == '\r') body.pop_back();
  return body;
}

}  // namespace

Value Interpreter::Eval(const Script& script, TSNode node) {
  node = Unwrap(node);
  const std::string type = TypeOf(node);
  const auto children = ChildrenOf(node);
  if (type == "variable") return GetVariable(VariableName(script.TextOf(node)), true);
  if (type == "string_literal") return Eval(script, ts_node_child(node, 0));
  if (type == "expandable_string_literal") {
    const std::string text = script.TextOf(node);
    return ExpandString(text.substr(1, text.size() - 2), script, ts_node_start_byte(node) + 1);
  }
  if (type == "verbatim_string_characters")
    return Value::String(VerbatimString(script.TextOf(node)));
  if (type == "expandable_here_string_literal") {
    const std::string text = script.TextOf(node);
    const std::string body = HereStringBody(text);
    const auto start = static_cast<std::uint32_t>(text.find('\n') + 1);
    // In a here-string "" is two quotes: expand it with them escaped.
    std::string escaped;
    for (const char c : body) escaped += c == '"' ? std::string("`\"") : std::string(1, c);
    return ExpandString(escaped, script, ts_node_start_byte(node) + start);
  }
  if (type == "verbatim_here_string_characters") {
    return Value::String(HereStringBody(script.TextOf(node)));
  }
  if (type == "integer_literal" || type == "decimal_integer_literal" ||
      type == "hexadecimal_integer_literal" || type == "real_literal") {
    return Multiplied(script.TextOf(node));
  }
  if (type == "parenthesized_expression") {
    return PipelineValue(script, FirstNamedChild(node, "pipeline"));
  }
  if (type == "sub_expression") {
    return Collapse(Collect(script, FieldOf(node, "statements")));
  }
  if (type == "array_expression") {
    return Value::Array(Collect(script, FieldOf(node, "statements")));
  }
  if (type == "script_block_expression") {
    auto data = std::make_shared<ScriptBlockData>();
    const std::string text = script.TextOf(node);
    data->text = text.substr(1, text.size() - 2);
    data->file = script.File();
    script.PositionOf(ts_node_start_byte(node) + 1, data->first_line, data->first_column);
    return Value::Block(data);
  }
  if (type == "hash_literal_expression") {
    auto table = NewHashtable();
    const TSNode body = FirstNamedChild(node, "hash_literal_body");
    if (!ts_node_is_null(body)) {
      for (const TSNode entry : NamedChildrenOf(body)) {
        const TSNode key = FirstNamedChild(entry, "key_expression");
        const TSNode inner = Unwrap(key);
        const std::string name =
            Is(inner, "simple_name") ? script.TextOf(inner) : ToText(Eval(script, inner));
        table->Set(name, PipelineValue(script, FirstNamedChild(entry, "pipeline")));
      }
    }
    return Value::Object(table);
  }
  if (type == "array_literal_expression") {
    Values items;
    for (const TSNode child : children) {
      if (ts_node_is_named(child) && !Is(child, "comment")) items.push_back(Eval(script, child));
    }
    return Value::Array(std::move(items));
  }
  if (type == "expression_with_unary_operator") {
    const std::string op = LowerAscii(script.TextOf(children.front()));
    const TSNode operand = children.back();
    if (op == ",") return Value::Array({Eval(script, operand)});
    return UnaryOperator(op, Eval(script, operand));
  }
  if (type == "pre_increment_expression" || type == "pre_decrement_expression" ||
      type == "post_increment_expression" || type == "post_decrement_expression") {
    const TSNode target = FirstNamedChild(node, "variable");
    if (ts_node_is_null(target)) Unsupported("++ or -- on something other than a variable");
    const std::string name = VariableName(script.TextOf(target));
    const Value before = GetVariable(name);
    const bool up = type.find("increment") != std::string::npos;
    const Value after =
        BinaryOperator(up ? "+" : "-", before.IsNull() ? Value::Int(0) : before, Value::Int(1));
    SetVariable(name, after);
    return type.rfind("pre", 0) == 0 ? after : before;
  }
  if (type == "cast_expression") {
    const TSNode type_literal = FirstNamedChild(node, "type_literal");
    return Cast(LowerAscii(TypeNameOf(script, type_literal)), Eval(script, children.back()));
  }
  if (type == "logical_expression") {
    const std::string op = LowerAscii(script.TextOf(children[1]));
    const bool left = ToBool(Eval(script, children[0]));
    if (op == "-and") return Value::Bool(left && ToBool(Eval(script, children[2])));
    if (op == "-or") return Value::Bool(left || ToBool(Eval(script, children[2])));
    if (op == "-xor") return Value::Bool(left != ToBool(Eval(script, children[2])));
    Unsupported("the operator " + op);
  }
  if (type == "comparison_expression" || type == "additive_expression" ||
      type == "multiplicative_expression" || type == "bitwise_expression" ||
      type == "format_expression" || type == "range_expression" ||
      type == "comparison_argument_expression" || type == "additive_argument_expression" ||
      type == "multiplicative_argument_expression") {
    if (children.size() != 3) Unsupported("the expression " + script.TextOf(node));
    const std::string op = LowerAscii(script.TextOf(children[1]));
    const TSNode right = Unwrap(children[2]);
    if (op == "-is" || op == "-isnot" || op == "-as") Unsupported("the operator " + op);
    return BinaryOperator(op, Eval(script, children[0]), Eval(script, right));
  }
  if (type == "member_access") {
    const TSNode member = FirstNamedChild(node, "member_name");
    const TSNode inner = ts_node_named_child(member, 0);
    const std::string name =
        Is(inner, "simple_name") ? script.TextOf(inner) : ToText(Eval(script, inner));
    const bool is_static = script.TextOf(children[1]) == "::";
    if (is_static) {
      if (!Is(children[0], "type_literal")) Unsupported("a static member of a non-type");
      return GetStatic(LowerAscii(TypeNameOf(script, children[0])), name);
    }
    return GetMember(Eval(script, children[0]), name);
  }
  if (type == "invokation_expression") {
    const TSNode member = FirstNamedChild(node, "member_name");
    const std::string name = script.TextOf(member);
    Values args;
    const TSNode list = FirstNamedChild(node, "argument_list");
    const TSNode expressions = FieldOf(list, "argument_expression_list");
    if (!ts_node_is_null(expressions)) {
      for (const TSNode arg : NamedChildrenOf(expressions)) args.push_back(Eval(script, arg));
    }
    const TSNode target = children[0];
    if (script.TextOf(children[1]) == "::") {
      if (!Is(target, "type_literal")) Unsupported("a static method of a non-type");
      return CallStatic(LowerAscii(TypeNameOf(script, target)), name, args);
    }
    return CallMethod(Eval(script, target), name, args);
  }
  if (type == "element_access") {
    const TSNode target = children[0];
    TSNode index{};
    for (std::size_t i = 1; i < children.size(); ++i) {
      if (ts_node_is_named(children[i])) index = children[i];
    }
    return Index(Eval(script, target), Eval(script, index));
  }
  if (type == "type_literal") {
    return Value::Object(NewObject("System.RuntimeType", TypeNameOf(script, node)));
  }
  if (type == "pipeline") return PipelineValue(script, node);
  Unsupported("the expression " + type + " `" + script.TextOf(node).substr(0, 40) + "`");
}

void Interpreter::Assign(const Script& script, TSNode target, const std::string& op, Value value) {
  target = Unwrap(target);
  const auto compute = [this, &op](const Value& current, const Value& rhs) {
    if (op == "=") return rhs;
    if (op == "+=") return Add(current, rhs);
    if (op == "-=") return BinaryOperator("-", current, rhs);
    if (op == "*=") return BinaryOperator("*", current, rhs);
    if (op == "/=") return BinaryOperator("/", current, rhs);
    Unsupported("the assignment operator " + op);
  };
  const std::string type = TypeOf(target);
  if (type == "variable") {
    const std::string name = VariableName(script.TextOf(target));
    SetVariable(name, compute(op == "=" ? Value() : GetVariable(name), value));
    return;
  }
  const auto children = ChildrenOf(target);
  if (type == "member_access" && script.TextOf(children[1]) == "::" &&
      Is(children[0], "type_literal") && op == "=") {
    SetStatic(TypeNameOf(script, children[0]),
              script.TextOf(FirstNamedChild(target, "member_name")), std::move(value));
    return;
  }
  if (type == "member_access" && script.TextOf(children[1]) == ".") {
    const Value object = Eval(script, children[0]);
    const std::string name = script.TextOf(FirstNamedChild(target, "member_name"));
    SetMember(object, name, compute(op == "=" ? Value() : GetMember(object, name), value));
    return;
  }
  if (type == "element_access") {
    const Value container = Eval(script, children[0]);
    TSNode index_node{};
    for (std::size_t i = 1; i < children.size(); ++i) {
      if (ts_node_is_named(children[i])) index_node = children[i];
    }
    const Value index = Eval(script, index_node);
    const Value result = compute(op == "=" ? Value() : Index(container, index), value);
    if (container.kind == Value::Kind::kObject && container.object->hashtable) {
      container.object->Set(ToText(index), result);
      return;
    }
    if (container.IsArray()) {
      auto position = ToInteger(index).value_or(-1);
      const auto size = static_cast<std::int64_t>(container.array->size());
      if (position < 0) position += size;
      if (position < 0 || position >= size) Fail("Index was outside the bounds of the array.");
      (*container.array)[static_cast<std::size_t>(position)] = result;
      return;
    }
    Unsupported("assigning an element of a " + TypeName(container));
  }
  Unsupported("assigning to `" + script.TextOf(target) + "`");
}

}  // namespace dxshim::test::node_standin::powershell
