// The kubelet.exe command line a PowerShell kubelet script gives: kubeadm's flags, literal flags.
#include "tests/support/node_standin/powershell_emulation.h"

#include <cstddef>
#include <vector>

#include "devices/windows/wide_text.h"
#include "tests/support/node_standin/command_line.h"
#include "tests/support/node_standin/files.h"
#include "tests/support/node_standin/text.h"

namespace dxshim::test::node_standin {

using dxshim::devices::windows::Utf8FromWide;
using dxshim::devices::windows::Widen;

namespace {

// Every literal `--name=value` token of a PowerShell script, in order, without those that hold a
// `$` (PowerShell would substitute a variable or an expression there). A token starts at `--`
// after a blank, a quote or a bracket, its value ends at a blank or an unescaped quote, and a
// backtick escapes the next character as in PowerShell's double-quoted strings (`" is "). Lines
// starting with # and <# ... #> blocks are comments.
std::vector<std::string> LiteralFlags(const std::string& script) {
  const auto is_name = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  };
  const auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  std::vector<std::string> flags;
  bool line_start = true;
  std::size_t i = 0;
  while (i < script.size()) {
    const char c = script[i];
    if (script.compare(i, 2, "<#") == 0) {
      const auto end = script.find("#>", i + 2);
      i = end == std::string::npos ? script.size() : end + 2;
      continue;
    }
    if (c == '#' && line_start) {
      i = script.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (is_blank(c)) {
      line_start = line_start || c == '\n';
      ++i;
      continue;
    }
    line_start = false;
    const bool starts_token = i == 0 || !(is_name(script[i - 1]) || script[i - 1] == '`');
    if (c == '-' && starts_token && script.compare(i, 2, "--") == 0) {
      std::size_t j = i + 2;
      while (j < script.size() && is_name(script[j])) ++j;
      if (j > i + 2 && j < script.size() && script[j] == '=') {
        std::string value;
        std::size_t k = j + 1;
        while (k < script.size() && !is_blank(script[k]) && script[k] != '"' && script[k] != '\'') {
          if (script[k] == '`' && k + 1 < script.size()) ++k;
          value += script[k++];
        }
        if (script.substr(i, k - i).find('$') == std::string::npos)
          flags.push_back(script.substr(i, j + 1 - i) + value);
        i = k;
        continue;
      }
    }
    ++i;
  }
  return flags;
}

// The KUBELET_KUBEADM_ARGS="..." of kubeadm's kubeadm-flags.env: the text between its quotes.
std::string KubeadmArgs(const std::string& env_file) {
  const std::string key = "KUBELET_KUBEADM_ARGS=";
  std::size_t start = 0;
  while (start < env_file.size()) {
    auto end = env_file.find('\n', start);
    if (end == std::string::npos) end = env_file.size();
    std::string line = env_file.substr(start, end - start);
    start = end + 1;
    line.erase(0, line.find_first_not_of(" \t"));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.rfind(key, 0) != 0) continue;
    std::string value = line.substr(key.size());
    const auto open = value.find('"');
    const auto close = value.rfind('"');
    if (open != std::string::npos && close > open) value = value.substr(open + 1, close - open - 1);
    return value;
  }
  return "";
}

}  // namespace

std::optional<std::wstring> EmulatedPowerShell(const std::wstring& parameters,
                                               const std::wstring& nssm_folder,
                                               std::string& error) {
  std::wstring script;
  const auto words = SplitParameters(parameters);
  for (std::size_t i = 0; i + 1 < words.size() && script.empty(); ++i) {
    if (Lower(words[i]) == L"-file") script = words[i + 1];
  }
  for (std::size_t i = 0; i < parameters.size() && script.empty();) {
    const auto start = parameters.find_first_not_of(L" \t\"'", i);
    if (start == std::wstring::npos) break;
    auto end = parameters.find_first_of(L" \t\"'", start);
    if (end == std::wstring::npos) end = parameters.size();
    const std::wstring word = parameters.substr(start, end - start);
    if (EndsWithNoCase(word, L".ps1")) script = word;
    i = end;
  }
  if (script.empty()) {
    error =
        "no script (-File X or a .ps1 word) in AppParameters: " + Utf8FromWide(parameters.c_str());
    return std::nullopt;
  }
  const auto text = ReadTextFile(script);
  if (!text) {
    error = "cannot read the script " + Utf8FromWide(script.c_str());
    return std::nullopt;
  }
  std::wstring command = L"\"" + nssm_folder + L"\\kubelet.exe\"";
  if (text->find("kubeadm-flags.env") != std::string::npos) {
    const auto env =
        ReadTextFile(ExpandEnvironment(L"%SystemDrive%\\var\\lib\\kubelet\\kubeadm-flags.env"));
    const std::string kubeadm = env ? KubeadmArgs(*env) : "";
    if (!kubeadm.empty()) command += L" " + Widen(kubeadm);
  }
  for (const auto& flag : LiteralFlags(*text)) command += L" " + Widen(flag);
  return command;
}

}  // namespace dxshim::test::node_standin
