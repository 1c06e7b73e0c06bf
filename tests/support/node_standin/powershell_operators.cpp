// PowerShell's operators: arithmetic, comparison (with an array on the left a filter), -like,
// -match, -replace, -split, -join, -contains, -in, and casts.
#include <cmath>
#include <utility>

#include "tests/support/node_standin/powershell_interpreter.h"
#include "tests/support/node_standin/powershell_patterns.h"

namespace dxshim::test::node_standin::powershell {

namespace {

double AsDouble(const Value& number) {
  return number.kind == Value::Kind::kInt ? static_cast<double>(number.integer) : number.real;
}

// -ceq, -ieq and -eq: the operator without its case prefix, and whether it is case-sensitive.
std::string BaseOperator(const std::string& op, bool& case_sensitive) {
  case_sensitive = false;
  if (op.size() > 2 && op[0] == '-' && (op[1] == 'c' || op[1] == 'i')) {
    static const char* const kBases[] = {
        "eq",    "ne",       "gt",      "ge",    "lt",       "le",          "like", "notlike",
        "match", "notmatch", "replace", "split", "contains", "notcontains", "in",   "notin"};
    const std::string rest = op.substr(2);
    for (const char* base : kBases) {
      if (rest == base) {
        case_sensitive = op[1] == 'c';
        return "-" + rest;
      }
    }
  }
  return op;
}

}  // namespace

Value Interpreter::Add(const Value& left, const Value& right) {
  switch (left.kind) {
    case Value::Kind::kNull:
      if (right.IsArray()) return Value::Array(*right.array);
      return right;
    case Value::Kind::kArray: {
      Values items = *left.array;
      if (right.IsArray()) {
        items.insert(items.end(), right.array->begin(), right.array->end());
      } else {
        items.push_back(right);
      }
      return Value::Array(std::move(items));
    }
    case Value::Kind::kString:
      return Value::String(left.text + ToText(right));
    case Value::Kind::kInt:
    case Value::Kind::kDouble:
    case Value::Kind::kBool: {
      const auto a = ToNumber(left);
      const auto b = ToNumber(right);
      if (!b) Fail("Cannot convert value \"" + ToText(right) + "\" to type \"System.Int32\".");
      if (a->kind == Value::Kind::kInt && b->kind == Value::Kind::kInt) {
        return Value::Int(a->integer + b->integer);
      }
      return Value::Real(AsDouble(*a) + AsDouble(*b));
    }
    case Value::Kind::kObject:
      if (left.object->hashtable && right.kind == Value::Kind::kObject && right.object->hashtable) {
        auto table = NewHashtable();
        table->members = left.object->members;
        for (const auto& [key, value] : right.object->members) {
          if (table->Find(key))
            Fail("Item has already been added. Key in dictionary: '" + key + "'");
          table->Set(key, value);
        }
        return Value::Object(table);
      }
      break;
    default:
      break;
  }
  Unsupported("+ with a " + TypeName(left) + " on the left");
}

Value Interpreter::UnaryOperator(const std::string& op, const Value& operand) {
  if (op == "!" || op == "-not") return Value::Bool(!ToBool(operand));
  if (op == "-" || op == "+") {
    const auto number = ToNumber(operand);
    if (!number) Fail("Cannot convert \"" + ToText(operand) + "\" to a number.");
    if (op == "+") return *number;
    return number->kind == Value::Kind::kInt ? Value::Int(-number->integer)
                                             : Value::Real(-number->real);
  }
  if (op == "-join") {
    std::string out;
    for (const Value& item : Enumerate(operand, false)) out += ToText(item);
    return Value::String(out);
  }
  if (op == "-split") {
    Values pieces;
    for (const Value& item : Enumerate(operand, false)) {
      const std::string text = ToText(item);
      std::size_t i = 0;
      while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        std::size_t j = i;
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j > i) pieces.push_back(Value::String(text.substr(i, j - i)));
        i = j;
      }
    }
    return Value::Array(std::move(pieces));
  }
  Unsupported("the unary operator " + op);
}

Value Interpreter::BinaryOperator(const std::string& raw_op, const Value& left,
                                  const Value& right) {
  bool cs = false;
  const std::string op = BaseOperator(raw_op, cs);
  if (op == "+") return Add(left, right);
  if (op == "-" || op == "*" || op == "/" || op == "%") {
    if (op == "*" && left.IsString()) {
      const auto count = ToInteger(right);
      if (!count) Fail("Cannot convert \"" + ToText(right) + "\" to \"System.Int32\".");
      std::string out;
      for (std::int64_t i = 0; i < *count; ++i) out += left.text;
      return Value::String(out);
    }
    const auto a = ToNumber(left);
    const auto b = ToNumber(right);
    if (!a || !b) {
      Fail("Method invocation failed because [" + TypeName(left) +
           "] does not contain a method "
           "named 'op_" +
           (op == "-" ? std::string("Subtraction") : "Arithmetic") + "'.");
    }
    const bool integers = a->kind == Value::Kind::kInt && b->kind == Value::Kind::kInt;
    if (op == "-")
      return integers ? Value::Int(a->integer - b->integer)
                      : Value::Real(AsDouble(*a) - AsDouble(*b));
    if (op == "*")
      return integers ? Value::Int(a->integer * b->integer)
                      : Value::Real(AsDouble(*a) * AsDouble(*b));
    if (AsDouble(*b) == 0) Fail("Attempted to divide by zero.");
    if (op == "%") {
      return integers ? Value::Int(a->integer % b->integer)
                      : Value::Real(std::fmod(AsDouble(*a), AsDouble(*b)));
    }
    if (integers && a->integer % b->integer == 0) return Value::Int(a->integer / b->integer);
    return Value::Real(AsDouble(*a) / AsDouble(*b));
  }
  if (op == "-join") {
    std::string out;
    const std::string separator = ToText(right);
    bool first = true;
    for (const Value& item : Enumerate(left, false)) {
      if (!first) out += separator;
      first = false;
      out += ToText(item);
    }
    return Value::String(out);
  }
  if (op == "-split") {
    const Values parts = right.IsArray() ? *right.array : Values{right};
    if (parts.size() > 1) Unsupported("-split with a maximum count or options");
    std::string error;
    const auto pattern = DotNetRegex(ToText(parts.front()), cs, error);
    if (!pattern) Unsupported(error);
    Values out;
    for (const Value& item : Enumerate(left, false)) {
      for (auto& piece : RegexSplit(ToText(item), *pattern)) out.push_back(Value::String(piece));
    }
    return Value::Array(std::move(out));
  }
  if (op == "-replace") {
    const Values parts = right.IsArray() ? *right.array : Values{right};
    if (parts.size() > 2) Fail("The -replace operator allows only two elements to follow it.");
    std::string error;
    const auto pattern = DotNetRegex(ToText(parts.front()), cs, error);
    if (!pattern) Unsupported(error);
    const auto format = DotNetReplacement(parts.size() > 1 ? ToText(parts[1]) : "", error);
    if (!format) Unsupported(error);
    Values out;
    for (const Value& item : Enumerate(left, false)) {
      out.push_back(Value::String(std::regex_replace(ToText(item), *pattern, *format)));
    }
    return left.IsArray() ? Value::Array(std::move(out)) : out.front();
  }
  if (op == "-contains" || op == "-notcontains" || op == "-in" || op == "-notin") {
    const bool in = op == "-in" || op == "-notin";
    const Value& collection = in ? right : left;
    const Value& item = in ? left : right;
    bool found = false;
    for (const Value& element : Enumerate(collection, false)) {
      if (ValuesEqual(element, item, cs)) found = true;
    }
    const bool negated = op == "-notcontains" || op == "-notin";
    return Value::Bool(found != negated);
  }
  // The comparisons: on an array, the items that compare true.
  const auto compare = [this, &op, cs, &right](const Value& item) -> bool {
    if (op == "-eq") return ValuesEqual(item, right, cs);
    if (op == "-ne") return !ValuesEqual(item, right, cs);
    if (op == "-like" || op == "-notlike") {
      return WildcardMatch(ToText(right), ToText(item), cs) == (op == "-like");
    }
    if (op == "-match" || op == "-notmatch") {
      std::string error;
      const auto pattern = DotNetRegex(ToText(right), cs, error);
      if (!pattern) Unsupported(error);
      std::smatch match;
      const std::string text = ToText(item);
      const bool found = std::regex_search(text, match, *pattern);
      if (found) {  // -notmatch too, when it finds the pattern
        auto matches = NewHashtable();
        for (std::size_t g = 0; g < match.size(); ++g) {
          if (match[g].matched) {
            matches->Set(std::to_string(g), Value::String(match[g].str()));
          }
        }
        SetVariable("Matches", Value::Object(matches));
      }
      return found == (op == "-match");
    }
    if (op == "-gt" || op == "-ge" || op == "-lt" || op == "-le") {
      const auto order = CompareValues(item, right, cs);
      if (!order) {
        Fail("Could not compare \"" + ToText(item) + "\" to \"" + ToText(right) + "\".");
      }
      if (op == "-gt") return *order > 0;
      if (op == "-ge") return *order >= 0;
      if (op == "-lt") return *order < 0;
      return *order <= 0;
    }
    Unsupported("the operator " + op);
  };
  if (left.IsArray()) {
    Values matching;
    for (const Value& item : *left.array) {
      if (compare(item)) matching.push_back(item);
    }
    return Value::Array(std::move(matching));
  }
  return Value::Bool(compare(left));
}

Value Interpreter::Cast(const std::string& raw_type, const Value& value) {
  std::string type = LowerAscii(raw_type);
  if (type.rfind("system.", 0) == 0) type = type.substr(7);
  if (type == "string") return value.IsNull() ? Value::String("") : Value::String(ToText(value));
  if (type == "bool" || type == "boolean") return Value::Bool(ToBool(value));
  if (type == "int" || type == "int32" || type == "long" || type == "int64" || type == "uint32" ||
      type == "uint64") {
    const auto number = ToInteger(value);
    if (!number) {
      Fail("Cannot convert value \"" + ToText(value) +
           "\" to type \"System.Int32\". Error: "
           "\"Input string was not in a correct format.\"");
    }
    return Value::Int(*number);
  }
  if (type == "double" || type == "float" || type == "single" || type == "decimal") {
    const auto number = ToNumber(value);
    if (!number) Fail("Cannot convert value \"" + ToText(value) + "\" to type \"System.Double\".");
    return Value::Real(AsDouble(*number));
  }
  if (type == "array" || type == "object[]") return Value::Array(Enumerate(value, false));
  if (type == "void") return Value();
  if (type == "version") return VersionValue(ToText(value));
  if (type == "pscustomobject" || type == "management.automation.pscustomobject") {
    if (value.kind != Value::Kind::kObject || !value.object->hashtable) return value;
    auto object = NewCustomObject();
    for (const auto& [name, member] : value.object->members) object->Set(name, member);
    return Value::Object(object);
  }
  if (type == "object" || type == "psobject") return value;
  Unsupported("the cast [" + raw_type + "]");
}

// System.Version.Parse: two to four dot-separated numbers; the parts not given are -1.
Value Interpreter::VersionValue(const std::string& text) {
  std::vector<std::int64_t> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto dot = text.find('.', start);
    const std::string part = text.substr(start, dot == std::string::npos ? dot : dot - start);
    const auto number = ToInteger(Value::String(part));
    if (part.empty() || !number || *number < 0) {
      Fail("Cannot convert value \"" + text + "\" to type \"System.Version\".");
    }
    parts.push_back(*number);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.size() < 2 || parts.size() > 4) {
    Fail("Cannot convert value \"" + text + "\" to type \"System.Version\".");
  }
  auto version = NewObject("System.Version", text);
  const char* const names[] = {"Major", "Minor", "Build", "Revision"};
  for (std::size_t i = 0; i < 4; ++i) {
    version->Set(names[i], Value::Int(i < parts.size() ? parts[i] : -1));
  }
  return Value::Object(version);
}

}  // namespace dxshim::test::node_standin::powershell
