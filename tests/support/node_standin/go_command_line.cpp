// The Go flag package's parsing and os/exec's Windows command line (see go_command_line.h).
#include "tests/support/node_standin/go_command_line.h"

#include <algorithm>

namespace dxshim::test::node_standin {

namespace {

// strconv.ParseBool's accepted spellings.
bool ParseBool(const std::string& text, bool& value) {
  static const std::vector<std::string> truths = {"1", "t", "T", "TRUE", "true", "True"};
  static const std::vector<std::string> lies = {"0", "f", "F", "FALSE", "false", "False"};
  if (std::find(truths.begin(), truths.end(), text) != truths.end()) {
    value = true;
    return true;
  }
  if (std::find(lies.begin(), lies.end(), text) != lies.end()) {
    value = false;
    return true;
  }
  return false;
}

}  // namespace

GoFlagParse ParseGoFlags(const std::vector<std::string>& args, const std::vector<GoFlag>& flags) {
  GoFlagParse out;
  std::size_t at = 0;
  while (at < args.size()) {
    const std::string& word = args[at];
    if (word.size() < 2 || word[0] != '-') break;
    std::size_t dashes = 1;
    if (word[1] == '-') {
      ++dashes;
      if (word.size() == 2) {  // "--" ends the flags
        ++at;
        break;
      }
    }
    std::string name = word.substr(dashes);
    if (name.empty() || name[0] == '-' || name[0] == '=') {
      out.error = "bad flag syntax: " + word;
      return out;
    }
    ++at;
    bool has_value = false;
    std::string value;
    const auto equals = name.find('=', 1);  // "=" cannot be first
    if (equals != std::string::npos) {
      value = name.substr(equals + 1);
      has_value = true;
      name.resize(equals);
    }
    const auto flag = std::find_if(flags.begin(), flags.end(),
                                   [&name](const GoFlag& f) { return f.name == name; });
    if (flag == flags.end()) {
      if (name == "help" || name == "h") {
        out.help = true;
        return out;
      }
      out.error = "flag provided but not defined: -" + name;
      return out;
    }
    if (flag->is_bool) {
      bool parsed = true;
      if (has_value && !ParseBool(value, parsed)) {
        out.error = "invalid boolean value \"";
        out.error += value;
        out.error += "\" for -" + name + ": parse error";
        return out;
      }
      out.values[name] = parsed ? "true" : "false";
      continue;
    }
    if (!has_value && at < args.size()) {  // the value is the next word
      value = args[at++];
      has_value = true;
    }
    if (!has_value) {
      out.error = "flag needs an argument: -" + name;
      return out;
    }
    out.values[name] = value;
  }
  out.rest.assign(args.begin() + static_cast<std::ptrdiff_t>(at), args.end());
  return out;
}

std::string GoEscapeArg(std::string_view arg) {
  if (arg.empty()) return "\"\"";
  const bool needs_backslash = arg.find_first_of("\"\\") != std::string_view::npos;
  const bool has_space = arg.find_first_of(" \t") != std::string_view::npos;
  if (!needs_backslash && !has_space) return std::string(arg);
  if (!needs_backslash) return "\"" + std::string(arg) + "\"";
  std::string out = has_space ? "\"" : "";
  std::size_t slashes = 0;
  for (const char c : arg) {
    if (c == '\\') {
      ++slashes;
    } else if (c == '"') {
      out.append(slashes, '\\');
      out += '\\';
      slashes = 0;
    } else {
      slashes = 0;
    }
    out += c;
  }
  if (has_space) {
    out.append(slashes, '\\');
    out += '"';
  }
  return out;
}

std::string GoCommandLine(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& arg : args) {
    if (!out.empty()) out += ' ';
    out += GoEscapeArg(arg);
  }
  return out;
}

}  // namespace dxshim::test::node_standin
