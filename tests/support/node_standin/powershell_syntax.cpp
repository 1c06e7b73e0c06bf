// Parsing a script with tree-sitter's PowerShell grammar; positions and syntax errors.
#include "tests/support/node_standin/powershell_syntax.h"

#include <cstring>
#include <utility>

#include "tests/support/node_standin/powershell_command_tokens.h"

extern "C" const TSLanguage* tree_sitter_powershell();

namespace dxshim::test::node_standin::powershell {

std::shared_ptr<const Script> Script::Parse(std::string text, std::string file,
                                            std::uint32_t first_line, std::uint32_t first_column) {
  return std::shared_ptr<const Script>(
      new Script(std::move(text), std::move(file), first_line, first_column));
}

Script::Script(std::string text, std::string file, std::uint32_t first_line,
               std::uint32_t first_column)
    : text_(std::move(text)),
      file_(std::move(file)),
      first_line_(first_line),
      first_column_(first_column) {
  // The grammar reads a command's arguments badly (`--name=value` derails it so that the rest of
  // the line, or of the script, parses as errors). It does find where commands start: their
  // extent and words are then read with PowerShell's own tokenizer rules, blanked out for the
  // grammar, and the text parsed again, until no new command turns up.
  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_powershell());
  std::string masked = text_;
  for (int round = 0; round < 64; ++round) {
    tree_ = ts_parser_parse_string(parser, nullptr, masked.data(),
                                   static_cast<std::uint32_t>(masked.size()));
    if (!MaskCommands(ts_tree_root_node(tree_), masked)) break;
    ts_tree_delete(tree_);
  }
  ts_parser_delete(parser);
}

bool Script::MaskCommands(TSNode node, std::string& masked) {
  bool changed = false;
  if (std::strcmp(ts_node_type(node), "command") == 0) {
    const std::uint32_t start = ts_node_start_byte(node);
    bool inside = false;
    for (const auto& [from, to] : command_ends_) inside = inside || (start > from && start < to);
    std::uint32_t name_end = 0;
    std::uint32_t end = 0;
    if (!inside && !command_ends_.count(start) && CommandExtent(text_, start, name_end, end)) {
      command_ends_[start] = end;
      for (std::uint32_t k = name_end; k < end; ++k) {
        if (masked[k] != ' ' && masked[k] != '\n' && masked[k] != '\r') {
          masked[k] = ' ';
          changed = true;
        }
      }
    }
  }
  for (std::uint32_t i = 0; i < ts_node_child_count(node); ++i) {
    changed = MaskCommands(ts_node_child(node, i), masked) || changed;
  }
  return changed;
}

std::optional<std::uint32_t> Script::CommandEnd(std::uint32_t start) const {
  const auto it = command_ends_.find(start);
  if (it == command_ends_.end()) return std::nullopt;
  return it->second;
}

Script::~Script() { ts_tree_delete(tree_); }

std::string Script::TextOf(TSNode node) const {
  const std::uint32_t start = ts_node_start_byte(node);
  return text_.substr(start, ts_node_end_byte(node) - start);
}

std::uint32_t Script::LineOf(TSNode node) const {
  return first_line_ + ts_node_start_point(node).row;
}

std::uint32_t Script::ColumnOf(TSNode node) const {
  const TSPoint at = ts_node_start_point(node);
  return at.row == 0 ? first_column_ + at.column : at.column + 1;
}

std::string Script::Where(TSNode node) const {
  return file_ + ":" + std::to_string(LineOf(node)) + ":" + std::to_string(ColumnOf(node));
}

void Script::PositionOf(std::uint32_t offset, std::uint32_t& line, std::uint32_t& column) const {
  std::uint32_t row = 0;
  std::uint32_t at = 0;
  for (std::uint32_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++row;
      at = 0;
    } else {
      ++at;
    }
  }
  line = first_line_ + row;
  column = row == 0 ? first_column_ + at : at + 1;
}

std::string Script::WhereOffset(std::uint32_t offset) const {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  PositionOf(offset, line, column);
  return file_ + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {

// Whether NODE lies in a command's arguments (or is the command itself), read by the interpreter.
bool InCommandArguments(TSNode node) {
  for (TSNode at = node; !ts_node_is_null(at); at = ts_node_parent(at)) {
    const char* type = ts_node_type(at);
    if (std::strcmp(type, "command_elements") == 0 || std::strcmp(type, "command") == 0) {
      return true;
    }
  }
  return false;
}

std::optional<TSNode> FirstError(TSNode node) {
  if (!ts_node_has_error(node) && !ts_node_is_missing(node)) return std::nullopt;
  if ((ts_node_is_error(node) || ts_node_is_missing(node)) && !InCommandArguments(node)) {
    return node;
  }
  for (std::uint32_t i = 0; i < ts_node_child_count(node); ++i) {
    if (auto found = FirstError(ts_node_child(node, i))) return found;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> Script::SyntaxError() const {
  const auto error = FirstError(Root());
  if (!error) return std::nullopt;
  std::string what = ts_node_is_missing(*error)
                         ? std::string("a missing ") + ts_node_type(*error)
                         : "text the grammar cannot parse: `" + TextOf(*error).substr(0, 40) + "`";
  return Where(*error) + ": syntax error: " + what;
}

std::string TypeOf(TSNode node) { return ts_node_type(node); }

bool Is(TSNode node, const char* type) { return std::strcmp(ts_node_type(node), type) == 0; }

std::vector<TSNode> ChildrenOf(TSNode node) {
  std::vector<TSNode> out;
  const std::uint32_t n = ts_node_child_count(node);
  for (std::uint32_t i = 0; i < n; ++i) out.push_back(ts_node_child(node, i));
  return out;
}

std::vector<TSNode> NamedChildrenOf(TSNode node) {
  std::vector<TSNode> out;
  const std::uint32_t n = ts_node_named_child_count(node);
  for (std::uint32_t i = 0; i < n; ++i) {
    const TSNode child = ts_node_named_child(node, i);
    if (!Is(child, "comment")) out.push_back(child);
  }
  return out;
}

TSNode FieldOf(TSNode node, const char* field) {
  return ts_node_child_by_field_name(node, field, static_cast<std::uint32_t>(std::strlen(field)));
}

TSNode StatementsOf(TSNode root) {
  const TSNode list = FirstNamedChild(root, "statement_list");
  return ts_node_is_null(list) ? root : list;
}

TSNode FirstNamedChild(TSNode node, const char* type) {
  for (const TSNode child : NamedChildrenOf(node)) {
    if (Is(child, type)) return child;
  }
  return TSNode{};
}

}  // namespace dxshim::test::node_standin::powershell
