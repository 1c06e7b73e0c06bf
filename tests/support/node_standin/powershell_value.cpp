// PowerShell values and LanguagePrimitives' conversions (to string, bool, number, comparisons).
#include "tests/support/node_standin/powershell_value.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dxshim::test::node_standin::powershell {

Value Value::Bool(bool b) {
  Value v;
  v.kind = Kind::kBool;
  v.boolean = b;
  return v;
}
Value Value::Int(std::int64_t i) {
  Value v;
  v.kind = Kind::kInt;
  v.integer = i;
  return v;
}
Value Value::Real(double d) {
  Value v;
  v.kind = Kind::kDouble;
  v.real = d;
  return v;
}
Value Value::String(std::string s) {
  Value v;
  v.kind = Kind::kString;
  v.text = std::move(s);
  return v;
}
Value Value::Array(Values items) {
  Value v;
  v.kind = Kind::kArray;
  v.array = std::make_shared<Values>(std::move(items));
  return v;
}
Value Value::Object(std::shared_ptr<ObjectData> data) {
  Value v;
  v.kind = Kind::kObject;
  v.object = std::move(data);
  return v;
}
Value Value::Block(std::shared_ptr<const ScriptBlockData> data) {
  Value v;
  v.kind = Kind::kScriptBlock;
  v.block = std::move(data);
  return v;
}

const Value* ObjectData::Find(const std::string& name) const {
  for (const auto& [key, value] : members) {
    if (EqualsNoCase(key, name)) return &value;
  }
  return nullptr;
}

void ObjectData::Set(const std::string& name, Value value) {
  for (auto& [key, existing] : members) {
    if (EqualsNoCase(key, name)) {
      existing = std::move(value);
      return;
    }
  }
  members.emplace_back(name, std::move(value));
}

std::shared_ptr<ObjectData> NewObject(std::string type_name, std::string display) {
  auto data = std::make_shared<ObjectData>();
  data->type_name = std::move(type_name);
  data->display = std::move(display);
  return data;
}

std::shared_ptr<ObjectData> NewHashtable() {
  auto data = NewObject("System.Collections.Hashtable", "System.Collections.Hashtable");
  data->hashtable = true;
  return data;
}

std::shared_ptr<ObjectData> NewCustomObject() {
  return NewObject("System.Management.Automation.PSCustomObject");
}

namespace {

char LowerChar(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string RealText(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.15G", d);  // .NET's default: 15 digits, E+XX
  return buffer;
}

std::string Trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::optional<Value> ParseNumber(const std::string& raw) {
  const std::string text = Trimmed(raw);
  if (text.empty()) return Value::Int(0);
  std::size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') negative = text[i++] == '-';
  if (text.size() > i + 2 && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
    std::int64_t result = 0;
    for (std::size_t j = i + 2; j < text.size(); ++j) {
      const char c = LowerChar(text[j]);
      if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
      result = result * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
    }
    return Value::Int(negative ? -result : result);
  }
  bool digits = false;
  bool real = false;
  for (std::size_t j = i; j < text.size(); ++j) {
    const char c = text[j];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' || c == 'e' || c == 'E' ||
               ((c == '+' || c == '-') && (text[j - 1] == 'e' || text[j - 1] == 'E'))) {
      real = true;
    } else {
      return std::nullopt;
    }
  }
  if (!digits) return std::nullopt;
  if (!real) {
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end && *end == '\0') return Value::Int(value);
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (!end || *end != '\0') return std::nullopt;
  return Value::Real(value);
}

double AsDouble(const Value& number) {
  return number.kind == Value::Kind::kInt ? static_cast<double>(number.integer) : number.real;
}

std::string CustomObjectText(const ObjectData& object) {
  std::string out = "@{";
  bool first = true;
  for (const auto& [name, value] : object.members) {
    if (!first) out += "; ";
    first = false;
    out += name + "=" + ToText(value);
  }
  return out + "}";
}

}  // namespace

bool EqualsNoCase(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (LowerChar(a[i]) != LowerChar(b[i])) return false;
  }
  return true;
}

int CompareNoCase(const std::string& a, const std::string& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const char x = LowerChar(a[i]);
    const char y = LowerChar(b[i]);
    if (x != y) return static_cast<unsigned char>(x) < static_cast<unsigned char>(y) ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

std::string LowerAscii(std::string text) {
  for (auto& c : text) c = LowerChar(c);
  return text;
}

std::string ToText(const Value& value, const std::string& separator) {
  switch (value.kind) {
    case Value::Kind::kNull:
      return "";
    case Value::Kind::kBool:
      return value.boolean ? "True" : "False";
    case Value::Kind::kInt:
      return std::to_string(value.integer);
    case Value::Kind::kDouble:
      return RealText(value.real);
    case Value::Kind::kString:
      return value.text;
    case Value::Kind::kArray: {
      std::string out;
      for (std::size_t i = 0; i < value.array->size(); ++i) {
        if (i > 0) out += separator;
        const Value& item = (*value.array)[i];
        out += item.IsArray() ? "System.Object[]" : ToText(item, separator);
      }
      return out;
    }
    case Value::Kind::kObject:
      if (!value.object->display.empty()) return value.object->display;
      return value.object->hashtable ? "System.Collections.Hashtable"
                                     : CustomObjectText(*value.object);
    case Value::Kind::kScriptBlock:
      return value.block->text;
  }
  return "";
}

bool ToBool(const Value& value) {
  switch (value.kind) {
    case Value::Kind::kNull:
      return false;
    case Value::Kind::kBool:
      return value.boolean;
    case Value::Kind::kInt:
      return value.integer != 0;
    case Value::Kind::kDouble:
      return value.real != 0;
    case Value::Kind::kString:
      return !value.text.empty();
    case Value::Kind::kArray:
      if (value.array->empty()) return false;
      if (value.array->size() == 1) return ToBool(value.array->front());
      return true;
    case Value::Kind::kObject:
    case Value::Kind::kScriptBlock:
      return true;
  }
  return false;
}

std::optional<Value> ToNumber(const Value& value) {
  switch (value.kind) {
    case Value::Kind::kNull:
      return Value::Int(0);
    case Value::Kind::kBool:
      return Value::Int(value.boolean ? 1 : 0);
    case Value::Kind::kInt:
    case Value::Kind::kDouble:
      return value;
    case Value::Kind::kString:
      return ParseNumber(value.text);
    case Value::Kind::kArray:
      if (value.array->size() == 1) return ToNumber(value.array->front());
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> ToInteger(const Value& value) {
  const auto number = ToNumber(value);
  if (!number) return std::nullopt;
  if (number->kind == Value::Kind::kInt) return number->integer;
  // [int] rounds half to even, as .NET's Convert does.
  return static_cast<std::int64_t>(std::nearbyint(number->real));
}

Values Enumerate(const Value& value, bool for_pipeline) {
  if (value.IsArray()) return *value.array;
  if (value.IsNull() && !for_pipeline) return {};
  return {value};
}

Value Collapse(Values items) {
  if (items.empty()) return Value();
  if (items.size() == 1) return std::move(items.front());
  return Value::Array(std::move(items));
}

bool ValuesEqual(const Value& left, const Value& right, bool case_sensitive) {
  if (left.IsNull()) return right.IsNull();
  if (right.IsNull()) return false;
  switch (left.kind) {
    case Value::Kind::kBool:
      return left.boolean == ToBool(right);
    case Value::Kind::kInt:
    case Value::Kind::kDouble: {
      const auto other = ToNumber(right);
      if (!other || (right.IsString() && right.text.empty())) return false;
      return AsDouble(left) == AsDouble(*other);
    }
    case Value::Kind::kString: {
      const std::string other = ToText(right);
      return case_sensitive ? left.text == other : EqualsNoCase(left.text, other);
    }
    case Value::Kind::kObject:
      if (right.kind == Value::Kind::kObject) return left.object == right.object;
      return EqualsNoCase(ToText(left), ToText(right));
    default:
      return false;
  }
}

std::optional<int> CompareValues(const Value& left, const Value& right, bool case_sensitive) {
  if (left.IsNull()) return right.IsNull() ? 0 : -1;
  if (right.IsNull()) return 1;
  if (left.IsNumber() || left.kind == Value::Kind::kBool) {
    const auto a = ToNumber(left);
    const auto b = ToNumber(right);
    if (!a || !b) return std::nullopt;
    const double x = AsDouble(*a);
    const double y = AsDouble(*b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (left.IsString()) {
    const std::string other = ToText(right);
    if (case_sensitive) return left.text < other ? -1 : (left.text > other ? 1 : 0);
    return CompareNoCase(left.text, other);
  }
  const auto is_version = [](const Value& v) {
    return v.kind == Value::Kind::kObject && v.object->type_name == "System.Version";
  };
  if (is_version(left) && is_version(right)) {  // System.Version.CompareTo: part by part
    for (const char* part : {"Major", "Minor", "Build", "Revision"}) {
      const auto a = ToInteger(*left.object->Find(part)).value_or(-1);
      const auto b = ToInteger(*right.object->Find(part)).value_or(-1);
      if (a != b) return a < b ? -1 : 1;
    }
    return 0;
  }
  return std::nullopt;
}

std::string TypeName(const Value& value) {
  switch (value.kind) {
    case Value::Kind::kNull:
      return "";
    case Value::Kind::kBool:
      return "System.Boolean";
    case Value::Kind::kInt:
      return value.integer >= INT32_MIN && value.integer <= INT32_MAX ? "System.Int32"
                                                                      : "System.Int64";
    case Value::Kind::kDouble:
      return "System.Double";
    case Value::Kind::kString:
      return "System.String";
    case Value::Kind::kArray:
      return "System.Object[]";
    case Value::Kind::kObject:
      return value.object->type_name;
    case Value::Kind::kScriptBlock:
      return "System.Management.Automation.ScriptBlock";
  }
  return "";
}

}  // namespace dxshim::test::node_standin::powershell
