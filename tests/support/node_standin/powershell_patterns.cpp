// Wildcards and .NET regular expressions for -like, -match, -replace and -split.
#include "tests/support/node_standin/powershell_patterns.h"

#include <cctype>

namespace dxshim::test::node_standin::powershell {

namespace {

char Fold(char c, bool case_sensitive) {
  return case_sensitive ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool MatchFrom(const std::string& p, std::size_t pi, const std::string& t, std::size_t ti,
               bool cs) {
  while (pi < p.size()) {
    const char c = p[pi];
    if (c == '*') {
      while (pi < p.size() && p[pi] == '*') ++pi;
      if (pi == p.size()) return true;
      for (std::size_t k = ti; k <= t.size(); ++k) {
        if (MatchFrom(p, pi, t, k, cs)) return true;
      }
      return false;
    }
    if (ti >= t.size()) return false;
    if (c == '?') {
      ++pi;
      ++ti;
      continue;
    }
    if (c == '[') {
      const std::size_t close = p.find(']', pi + 1);
      if (close == std::string::npos) return false;
      bool found = false;
      const char x = Fold(t[ti], cs);
      for (std::size_t k = pi + 1; k < close; ++k) {
        if (k + 2 < close && p[k + 1] == '-') {
          found = found || (x >= Fold(p[k], cs) && x <= Fold(p[k + 2], cs));
          k += 2;
        } else {
          found = found || x == Fold(p[k], cs);
        }
      }
      if (!found) return false;
      pi = close + 1;
      ++ti;
      continue;
    }
    const char literal = (c == '`' && pi + 1 < p.size()) ? p[++pi] : c;
    if (Fold(literal, cs) != Fold(t[ti], cs)) return false;
    ++pi;
    ++ti;
  }
  return ti == t.size();
}

}  // namespace

bool WildcardMatch(const std::string& pattern, const std::string& text, bool case_sensitive) {
  return MatchFrom(pattern, 0, text, 0, case_sensitive);
}

std::optional<std::regex> DotNetRegex(const std::string& pattern, bool case_sensitive,
                                      std::string& error) {
  bool single_line = false;
  bool multi_line = false;
  bool ignore_case = !case_sensitive;
  std::size_t i = 0;
  while (pattern.compare(i, 2, "(?") == 0) {
    const std::size_t close = pattern.find(')', i);
    if (close == std::string::npos) break;
    const std::string options = pattern.substr(i + 2, close - i - 2);
    if (options.empty() || options.find_first_not_of("ism") != std::string::npos) break;
    single_line = single_line || options.find('s') != std::string::npos;
    multi_line = multi_line || options.find('m') != std::string::npos;
    ignore_case = ignore_case || options.find('i') != std::string::npos;
    i = close + 1;
  }
  std::string out;
  bool in_class = false;
  for (; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char n = pattern[i + 1];
      if (n == 'A' || n == 'z' || n == 'Z' || n == 'G' || n == 'p' || n == 'P' || n == 'k') {
        error = std::string("the .NET regex construct \\") + n + " is not implemented";
        return std::nullopt;
      }
      out += c;
      out += n;
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
    } else if (c == '(' && pattern.compare(i, 2, "(?") == 0 && pattern.compare(i, 3, "(?:") != 0 &&
               pattern.compare(i, 3, "(?=") != 0 && pattern.compare(i, 3, "(?!") != 0) {
      error = "the .NET regex group `" + pattern.substr(i, 4) + "...` is not implemented";
      return std::nullopt;
    } else if (c == '.' && single_line) {
      out += "[\\s\\S]";
    } else if (c == '$' && !multi_line) {
      out += "(?=\\n?$)";
    } else {
      out += c;
    }
  }
  auto flags = std::regex::ECMAScript;
  if (ignore_case) flags |= std::regex::icase;
  if (multi_line) flags |= std::regex::multiline;
  try {
    return std::regex(out, flags);
  } catch (const std::regex_error& e) {
    error = "the regex `" + pattern + "` cannot be used: " + e.what();
    return std::nullopt;
  }
}

std::optional<std::string> DotNetReplacement(const std::string& replacement, std::string& error) {
  std::string out;
  for (std::size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    if (c != '$' || i + 1 >= replacement.size()) {
      out += c;
      continue;
    }
    const char n = replacement[i + 1];
    if (n == '0') {
      out += "$&";
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(n)) || n == '$' || n == '&' || n == '`' ||
               n == '\'') {
      out += c;
      out += n;
      ++i;
    } else if (n == '{') {
      const std::size_t close = replacement.find('}', i);
      const std::string group =
          close == std::string::npos ? "" : replacement.substr(i + 2, close - i - 2);
      if (group.empty() || group.find_first_not_of("0123456789") != std::string::npos) {
        error = "the replacement `" + replacement + "` names a group: not implemented";
        return std::nullopt;
      }
      out += group == "0" ? "$&" : "$" + group;
      i = close;
    } else if (n == '_' || n == '+') {
      error = std::string("the replacement $") + n + " is not implemented";
      return std::nullopt;
    } else {
      out += "$$";  // a lone $ is itself in .NET
    }
  }
  return out;
}

std::vector<std::string> RegexSplit(const std::string& text, const std::regex& pattern) {
  std::vector<std::string> out;
  std::size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
       it != std::sregex_iterator(); ++it) {
    const auto& match = *it;
    const auto position = static_cast<std::size_t>(match.position(0));
    if (match.length(0) == 0 && (position == 0 || position == text.size())) continue;
    out.push_back(text.substr(last, position - last));
    for (std::size_t group = 1; group < match.size(); ++group) {
      if (match[group].matched) out.push_back(match[group].str());
    }
    last = position + static_cast<std::size_t>(match.length(0));
  }
  out.push_back(text.substr(last));
  return out;
}

}  // namespace dxshim::test::node_standin::powershell
