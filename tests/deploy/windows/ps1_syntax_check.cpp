// Parses PowerShell scripts with the tree-sitter PowerShell grammar (fetched from npm by
// scripts/install-deps.sh: Debian has no pwsh) and reports every syntax error with its line and
// column. Exit 0 when every file parses cleanly, 1 otherwise, 2 for an unreadable file.
//   ps1_syntax_check FILE.ps1...
#include <tree_sitter/api.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

extern "C" const TSLanguage* tree_sitter_powershell();

namespace {

int Report(TSNode node, const std::string& file) {
  int errors = 0;
  if (ts_node_is_error(node) || ts_node_is_missing(node)) {
    const TSPoint at = ts_node_start_point(node);
    std::printf("%s:%u:%u: %s\n", file.c_str(), at.row + 1, at.column + 1,
                ts_node_is_missing(node) ? "missing token" : "syntax error");
    ++errors;
  }
  if (!ts_node_has_error(node)) return errors;
  for (std::uint32_t i = 0; i < ts_node_child_count(node); ++i) {
    errors += Report(ts_node_child(node, i), file);
  }
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  int errors = 0;
  TSParser* parser = ts_parser_new();
  if (!ts_parser_set_language(parser, tree_sitter_powershell())) {
    std::printf("the PowerShell grammar does not fit this tree-sitter runtime\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::printf("%s: cannot be read\n", argv[i]);
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    TSTree* tree = ts_parser_parse_string(parser, nullptr, source.data(),
                                          static_cast<std::uint32_t>(source.size()));
    const int found = Report(ts_tree_root_node(tree), argv[i]);
    std::printf("%s: %d syntax error(s)\n", argv[i], found);
    errors += found;
    ts_tree_delete(tree);
  }
  ts_parser_delete(parser);
  return errors == 0 ? 0 : 1;
}
