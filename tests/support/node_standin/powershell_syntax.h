// A PowerShell script parsed with tree-sitter's PowerShell grammar (scripts/install-deps.sh
// fetches it; Debian has no PowerShell), and the helpers the interpreter walks its tree with.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/node_standin/powershell_command_tokens.h"

namespace dxshim::test::node_standin::powershell {

class Script : public std::enable_shared_from_this<Script> {
 public:
  // TEXT (UTF-8) parsed as a script; its first line is line FIRST_LINE (its first column
  // FIRST_COLUMN) of FILE, so that a script block or an Invoke-Expression string parsed on its
  // own names the lines of the file it came from.
  static std::shared_ptr<const Script> Parse(std::string text, std::string file,
                                             std::uint32_t first_line = 1,
                                             std::uint32_t first_column = 1);
  ~Script();
  Script(const Script&) = delete;
  Script& operator=(const Script&) = delete;

  TSNode Root() const { return ts_tree_root_node(tree_); }
  const std::string& Text() const { return text_; }
  const std::string& File() const { return file_; }
  std::string TextOf(TSNode node) const;
  std::uint32_t LineOf(TSNode node) const;
  std::uint32_t ColumnOf(TSNode node) const;
  // "FILE:LINE:COLUMN" of NODE (or of byte OFFSET of the text).
  std::string Where(TSNode node) const;
  std::string WhereOffset(std::uint32_t offset) const;
  // The line and column of byte OFFSET of the text.
  void PositionOf(std::uint32_t offset, std::uint32_t& line, std::uint32_t& column) const;

  // Where the command that starts at byte START ends (PowerShell's tokenizer rules), if the
  // grammar found one there.
  std::optional<std::uint32_t> CommandEnd(std::uint32_t start) const;

  // The interpreter's caches for this script: its fragments parsed on their own (by offset) and
  // its commands' words (by their start).
  mutable std::map<std::uint32_t, std::shared_ptr<const Script>> fragments;
  mutable std::map<std::uint32_t, CommandSyntax> commands;

  // The first syntax error the grammar reports (a missing token or an unparsable part) outside
  // the arguments of a command, which the interpreter reads itself (the grammar cannot read
  // `--name=value` or `-Version1`): "FILE:LINE:COLUMN: ..." or nothing.
  std::optional<std::string> SyntaxError() const;

 private:
  Script(std::string text, std::string file, std::uint32_t first_line, std::uint32_t first_column);
  bool MaskCommands(TSNode node, std::string& masked);

  std::string text_;
  std::string file_;
  std::uint32_t first_line_;
  std::uint32_t first_column_;
  TSTree* tree_ = nullptr;
  std::map<std::uint32_t, std::uint32_t> command_ends_;
};

// Node helpers.
std::string TypeOf(TSNode node);
bool Is(TSNode node, const char* type);
std::vector<TSNode> ChildrenOf(TSNode node);            // all, anonymous tokens too
std::vector<TSNode> NamedChildrenOf(TSNode node);       // without anonymous tokens and comments
TSNode FieldOf(TSNode node, const char* field);         // null node when absent
TSNode FirstNamedChild(TSNode node, const char* type);  // null node when absent
// The statements of a script's root: its statement_list, or the root itself when the grammar's
// recovery wrapped a command line in an error node (see Script::SyntaxError).
TSNode StatementsOf(TSNode root);

}  // namespace dxshim::test::node_standin::powershell
