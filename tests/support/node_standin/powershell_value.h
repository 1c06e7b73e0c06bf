// The values of the PowerShell stand-in (powershell.exe): what a variable, an argument or a
// pipeline item holds, and PowerShell 5.1's conversions between them (LanguagePrimitives: to
// string, to bool, to number, equality and ordering). Portable: no Windows header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dxshim::test::node_standin::powershell {

struct Value;
using Values = std::vector<Value>;
struct ObjectData;
class Script;  // powershell_syntax.h

// A script block, `{ ... }`: its text between the braces, parsed (once, when first run) as a
// script of its own that starts at FIRST_LINE and FIRST_COLUMN of FILE.
struct ScriptBlockData {
  std::string text;
  std::string file;
  std::uint32_t first_line = 1;
  std::uint32_t first_column = 1;
  mutable std::shared_ptr<const Script> parsed;
};

// One PowerShell value. Strings are UTF-8 (PowerShell's are UTF-16: lengths count bytes, which
// only differs outside ASCII, which none of the scripts this stand-in runs has). Arrays and
// objects are shared, as .NET's reference types are.
struct Value {
  enum class Kind { kNull, kBool, kInt, kDouble, kString, kArray, kObject, kScriptBlock };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;
  std::shared_ptr<Values> array;
  std::shared_ptr<ObjectData> object;
  std::shared_ptr<const ScriptBlockData> block;

  static Value Bool(bool b);
  static Value Int(std::int64_t i);
  static Value Real(double d);
  static Value String(std::string s);
  static Value Array(Values items);
  static Value Object(std::shared_ptr<ObjectData> data);
  static Value Block(std::shared_ptr<const ScriptBlockData> data);

  bool IsNull() const { return kind == Kind::kNull; }
  bool IsString() const { return kind == Kind::kString; }
  bool IsArray() const { return kind == Kind::kArray; }
  bool IsNumber() const { return kind == Kind::kInt || kind == Kind::kDouble; }
};

// A .NET object as far as the scripts look at it: a type name, members in order (names compared
// without case, as PowerShell does) and what ToString() gives. A hashtable's keys are its members.
struct ObjectData {
  std::string type_name;  // e.g. System.Management.Automation.PSCustomObject
  bool hashtable = false;
  std::vector<std::pair<std::string, Value>> members;
  std::string display;  // ToString(); empty: PowerShell's rendering of a custom object or table

  const Value* Find(const std::string& name) const;
  void Set(const std::string& name, Value value);
};

std::shared_ptr<ObjectData> NewObject(std::string type_name, std::string display = {});
std::shared_ptr<ObjectData> NewHashtable();
std::shared_ptr<ObjectData> NewCustomObject();

// Case-insensitive ASCII comparison, as PowerShell compares names and (for -eq) strings.
bool EqualsNoCase(const std::string& a, const std::string& b);
int CompareNoCase(const std::string& a, const std::string& b);
std::string LowerAscii(std::string text);

// LanguagePrimitives.ConvertTo<string>: $null is "", booleans True/False, an array its items
// joined by SEPARATOR ($OFS, a space by default), a nested array System.Object[].
std::string ToText(const Value& value, const std::string& separator = " ");
// LanguagePrimitives.IsTrue: $null, 0, "" and an empty array are false; a one-item array is its
// item's truth; any other object is true.
bool ToBool(const Value& value);
// A number from a value as PowerShell converts one (a string's decimal or 0x hex integer, or a
// real; "" and $null are 0); nothing when it is not a number.
std::optional<Value> ToNumber(const Value& value);
std::optional<std::int64_t> ToInteger(const Value& value);

// The items a value gives a pipeline or foreach: an array's items, else the value itself
// (FOR_PIPELINE: $null is one item, as `$null | ...` runs once; foreach skips $null).
Values Enumerate(const Value& value, bool for_pipeline);
// A pipeline's output as one value: nothing is $null, one item itself, more an array.
Value Collapse(Values items);

// -eq (case-insensitive unless CASE_SENSITIVE), the left operand's type deciding the conversion.
bool ValuesEqual(const Value& left, const Value& right, bool case_sensitive);
// -lt/-gt ordering: <0, 0, >0 (nothing when the two cannot be compared).
std::optional<int> CompareValues(const Value& left, const Value& right, bool case_sensitive);

// The .NET type name GetType() would give (System.String, System.Int32, System.Object[], ...).
std::string TypeName(const Value& value);

}  // namespace dxshim::test::node_standin::powershell
