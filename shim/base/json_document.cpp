#include "shim/base/json_document.h"

#include "shim/base/json_text.h"

namespace dxshim {
namespace {

bool IsJsonLiteral(const std::string& s) {
  return s == "true" || s == "false" || s == "null" || IsJsonNumber(s);
}

void Emit(const YAML::Node& node, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  const std::string end_pad(static_cast<std::size_t>(indent), ' ');
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      if (node.size() == 0) {
        out += "{}";
        return;
      }
      out += "{\n";
      bool first = true;
      for (const auto& kv : node) {
        out += (first ? "" : ",\n") + pad + JsonString(kv.first.Scalar()) + ": ";
        Emit(kv.second, indent + 2, out);
        first = false;
      }
      out += "\n" + end_pad + "}";
      return;
    }
    case YAML::NodeType::Sequence: {
      if (node.size() == 0) {
        out += "[]";
        return;
      }
      out += "[\n";
      for (std::size_t i = 0; i < node.size(); ++i) {
        out += (i ? ",\n" : "") + pad;
        Emit(node[i], indent + 2, out);
      }
      out += "\n" + end_pad + "]";
      return;
    }
    case YAML::NodeType::Scalar:
      // A quoted scalar carries the non-specific tag "!"; a plain one "?".
      out += node.Tag() != kJsonStringTag && IsJsonLiteral(node.Scalar())
                 ? node.Scalar()
                 : JsonString(node.Scalar());
      return;
    default:
      out += "null";
  }
}

}  // namespace

std::string EmitJson(const YAML::Node& node) {
  std::string out;
  Emit(node, 0, out);
  return out + "\n";
}

}  // namespace dxshim
