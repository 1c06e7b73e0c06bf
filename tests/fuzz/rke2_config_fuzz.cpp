// libFuzzer target: rke2's configuration as the installer reads it and dxshim's drop-in, its one
// edit there (shim/install/edit/rke2_config.h). The input is dxshim's kubelet-arg items (first
// line, split at '|'), its node-label items (second line, the same) and rke2's files (the rest: the
// config file, then drop-ins, each after a line "%%"). Properties:
//   - Rke2KubeletArgs and Rke2Setting refuse only with EditError;
//   - the drop-in added after the operator's files: the kubelet-arg items rke2 gathers are the
//     operator's followed by dxshim's, the node-label+ items read back as given, node-name reads
//     as before (the operator's files are never edited, so no byte of them changes);
//   - the flag of dxshim's last kubelet-arg item (a plain `name=value` or `name+=value`) ends with
//     that value for kubelet;
//   - idempotence: the drop-in made again from the same items is the same file.
// Items are kept to valid UTF-8 without NUL: dxshim's own endpoint and labels.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shim/base/utf8_text.h"
#include "shim/install/edit/command_line.h"
#include "shim/install/edit/rke2_config.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace install = dxshim::install;
using dxshim::fuzz::Check;

std::vector<std::string> SplitAt(const std::string& text, char separator) {
  std::vector<std::string> parts;
  if (text.empty()) return parts;
  std::size_t begin = 0;
  while (true) {
    const auto end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string::npos ? end : end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

bool Usable(const std::vector<std::string>& items) {
  for (const auto& item : items) {
    if (!dxshim::IsValidUtf8(item) || item.find('\0') != std::string::npos) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = dxshim::fuzz::LeadingLines<2>(data, size);
  if (!input) return 0;
  const auto args = SplitAt((*input)[0], '|');
  const auto labels = SplitAt((*input)[1], '|');
  if (!Usable(args) || !Usable(labels)) return 0;
  std::vector<install::Rke2ConfigFile> files;
  for (const std::string& text : dxshim::fuzz::Sections((*input)[2], 8)) {
    files.push_back({"C:\\etc\\rancher\\rke2\\config.yaml" + std::to_string(files.size()), text});
  }

  std::vector<std::string> items;
  std::optional<std::string> node_name;
  try {
    items = install::Rke2KubeletArgs(files);
    node_name = install::Rke2Setting(files, "node-name");
  } catch (const install::EditError&) {
    return 0;
  }
  const std::string drop_in = install::Rke2DropInText(args, labels);
  Check(install::Rke2DropInText(args, labels) == drop_in, "the drop-in is made the same again");
  files.push_back(
      {std::string("C:\\etc\\rancher\\rke2\\config.yaml.d\\") + install::kRke2DropIn, drop_in});
  std::vector<std::string> expected = items;
  expected.insert(expected.end(), args.begin(), args.end());
  Check(install::Rke2KubeletArgs(files) == expected, "dxshim's items follow the operator's");
  Check(install::Rke2Setting(files, "node-name") == node_name, "node-name reads as before");
  std::vector<std::string> read_labels;
  for (const auto& label : YAML::Load(drop_in)["node-label+"])
    read_labels.push_back(label.Scalar());
  Check(read_labels == labels, "the node-label+ items read back");

  if (!args.empty()) {
    std::string item = args.back();
    if (item.rfind("--", 0) == 0) item.erase(0, 2);
    const auto eq = item.find('=');
    std::string name = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "true" : item.substr(eq + 1);
    if (!name.empty() && name.back() == '+') name.pop_back();
    if (!name.empty() && name.find_first_of("+-", name.size() - 1) == std::string::npos) {
      Check(install::Rke2KubeletFlag(expected, name) == value, "the last item's value wins");
    }
  }
  return 0;
}
