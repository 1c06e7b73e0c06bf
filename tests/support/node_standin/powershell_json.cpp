// A small recursive-descent JSON reader for ConvertFrom-Json, and ConvertTo-Json's writer.
#include "tests/support/node_standin/powershell_json.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/support/node_standin/utf8.h"

namespace dxshim::test::node_standin::powershell {

namespace {

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : text_(text) {}

  std::optional<Value> Document(std::string& error) {
    auto value = Element();
    Blank();
    if (value && at_ < text_.size()) Fail("text after the JSON value");
    if (!error_.empty()) {
      error = error_;
      return std::nullopt;
    }
    return value;
  }

 private:
  void Fail(const std::string& why) {
    if (error_.empty()) error_ = "invalid JSON at offset " + std::to_string(at_) + ": " + why;
  }
  void Blank() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\r' || text_[at_] == '\n')) {
      ++at_;
    }
  }
  bool Take(char c) {
    Blank();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool Word(const char* word) {
    const std::string w(word);
    if (text_.compare(at_, w.size(), w) != 0) return false;
    at_ += w.size();
    return true;
  }

  std::optional<Value> Element() {
    Blank();
    if (at_ >= text_.size()) {
      Fail("a value is missing");
      return std::nullopt;
    }
    const char c = text_[at_];
    if (c == '{') return Object();
    if (c == '[') return Array();
    if (c == '"') {
      auto s = String();
      if (!s) return std::nullopt;
      return Value::String(*s);
    }
    if (Word("true")) return Value::Bool(true);
    if (Word("false")) return Value::Bool(false);
    if (Word("null")) return Value();
    return Number();
  }

  std::optional<Value> Object() {
    ++at_;
    auto object = NewCustomObject();
    if (Take('}')) return Value::Object(object);
    do {
      Blank();
      auto name = String();
      if (!name) return std::nullopt;
      if (!Take(':')) {
        Fail("':' expected");
        return std::nullopt;
      }
      auto value = Element();
      if (!value) return std::nullopt;
      object->Set(*name, std::move(*value));
    } while (Take(','));
    if (!Take('}')) {
      Fail("'}' expected");
      return std::nullopt;
    }
    return Value::Object(object);
  }

  std::optional<Value> Array() {
    ++at_;
    Values items;
    if (Take(']')) return Value::Array(std::move(items));
    do {
      auto value = Element();
      if (!value) return std::nullopt;
      items.push_back(std::move(*value));
    } while (Take(','));
    if (!Take(']')) {
      Fail("']' expected");
      return std::nullopt;
    }
    return Value::Array(std::move(items));
  }

  std::optional<unsigned long> Hex4() {
    if (at_ + 4 > text_.size()) return std::nullopt;
    char* end = nullptr;
    const std::string digits = text_.substr(at_, 4);
    const unsigned long code = std::strtoul(digits.c_str(), &end, 16);
    if (!end || *end != '\0') return std::nullopt;
    at_ += 4;
    return code;
  }

  std::optional<std::string> String() {
    if (at_ >= text_.size() || text_[at_] != '"') {
      Fail("'\"' expected");
      return std::nullopt;
    }
    ++at_;
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) break;
      c = text_[at_++];
      switch (c) {
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          auto code = Hex4();
          if (!code) {
            Fail("bad \\u escape");
            return std::nullopt;
          }
          if (*code >= 0xD800 && *code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
            at_ += 2;
            const auto low = Hex4();
            if (!low) {
              Fail("bad \\u escape");
              return std::nullopt;
            }
            *code = 0x10000 + ((*code - 0xD800) << 10) + (*low - 0xDC00);
          }
          AppendUtf8(out, static_cast<std::uint32_t>(*code));
          break;
        }
        default:
          out += c;
      }
    }
    if (at_ >= text_.size()) {
      Fail("unterminated string");
      return std::nullopt;
    }
    ++at_;
    return out;
  }

  std::optional<Value> Number() {
    const std::size_t start = at_;
    bool real = false;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if ((c >= '0' && c <= '9') || c == '-' || c == '+') {
        ++at_;
      } else if (c == '.' || c == 'e' || c == 'E') {
        real = true;
        ++at_;
      } else {
        break;
      }
    }
    const std::string number = text_.substr(start, at_ - start);
    if (number.empty()) {
      Fail("unexpected character");
      return std::nullopt;
    }
    char* end = nullptr;
    if (!real) {
      const long long value = std::strtoll(number.c_str(), &end, 10);
      if (end && *end == '\0') return Value::Int(value);
    }
    const double value = std::strtod(number.c_str(), &end);
    if (!end || *end != '\0') {
      Fail("bad number");
      return std::nullopt;
    }
    return Value::Real(value);
  }

  const std::string& text_;
  std::size_t at_ = 0;
  std::string error_;
};

}  // namespace

std::optional<Value> ParseJson(const std::string& text, std::string& error) {
  return JsonReader(text).Document(error);
}

namespace {

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void Write(const Value& value, int depth, const std::string& indent, std::string& out) {
  const std::string inner = indent + "    ";
  switch (value.kind) {
    case Value::Kind::kNull:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += value.boolean ? "true" : "false";
      return;
    case Value::Kind::kInt:
    case Value::Kind::kDouble:
      out += ToText(value);
      return;
    case Value::Kind::kArray: {
      out += "[\r\n";
      for (std::size_t i = 0; i < value.array->size(); ++i) {
        out += inner;
        Write((*value.array)[i], depth - 1, inner, out);
        out += i + 1 < value.array->size() ? ",\r\n" : "\r\n";
      }
      out += indent + "]";
      return;
    }
    case Value::Kind::kObject: {
      if (depth < 0) {
        out += Quoted(ToText(value));
        return;
      }
      const auto& members = value.object->members;
      out += "{\r\n";
      for (std::size_t i = 0; i < members.size(); ++i) {
        out += inner + Quoted(members[i].first) + ":  ";
        Write(members[i].second, depth - 1, inner, out);
        out += i + 1 < members.size() ? ",\r\n" : "\r\n";
      }
      out += indent + "}";
      return;
    }
    default:
      out += Quoted(ToText(value));
  }
}

}  // namespace

std::string WriteJson(const Value& value, int depth) {
  std::string out;
  Write(value, depth, "", out);
  return out;
}

}  // namespace dxshim::test::node_standin::powershell
