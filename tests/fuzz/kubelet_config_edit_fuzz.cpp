// libFuzzer target: the installer's edit of kubelet's config file, YAML or JSON
// (shim/install/edit/config_file_edit.h). The input is a key (first line), a value (second line)
// and the file (the rest). Properties:
//   - ReadTopLevelString and SetTopLevelString refuse only with EditError (no yaml-cpp exception
//     or other error escapes);
//   - re-read: after SetTopLevelString the key reads the value;
//   - idempotence: setting it again changes nothing; a file where the key already reads the value
//     is returned unchanged;
//   - bytes outside the setting: the bytes of the input that the edit replaces lie within the old
//     value's own bytes (ScalarSpanOf) when the key had a value, else hold no line break (text
//     inserted, or a null on one line replaced); when the key was absent from a YAML file the input
//     is a prefix of the result (a line appended), every other top-level entry reads the same
//     (yaml-cpp's own dump of it, in order), and the syntax (YAML or JSON) stays.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shim/install/edit/command_line.h"
#include "shim/install/edit/config_file_edit.h"
#include "shim/install/edit/yaml_text.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace install = dxshim::install;
using dxshim::fuzz::Changed;
using dxshim::fuzz::ChangedSpan;
using dxshim::fuzz::Check;

// Every other top-level entry, as yaml-cpp writes it out again, in order.
std::vector<std::string> OtherEntries(const std::string& text, const std::string& key) {
  std::vector<std::string> entries;
  const YAML::Node root = YAML::Load(text);
  if (!root.IsMap()) return entries;
  for (const auto& entry : root) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) continue;
    entries.push_back(YAML::Dump(entry.first) + "\n: " + YAML::Dump(entry.second));
  }
  return entries;
}

bool HasKey(const std::string& text, const std::string& key) {
  const YAML::Node root = YAML::Load(text);
  if (!root.IsMap()) return false;
  for (const auto& entry : root) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = dxshim::fuzz::LeadingLines<2>(data, size);
  if (!input) return 0;
  const auto& [key, value, text] = *input;

  std::optional<std::string> before;
  bool readable = true;
  try {
    before = install::ReadTopLevelString(text, key);
  } catch (const install::EditError&) {
    readable = false;
  }
  std::string out;
  try {
    out = install::SetTopLevelString(text, key, value);
  } catch (const install::EditError&) {
    return 0;
  }
  Check(readable, "a file that cannot be read is not edited");
  Check(install::ReadTopLevelString(out, key) == value, "the key reads the value set");
  Check(install::SetTopLevelString(out, key, value) == out, "setting it again changes nothing");
  if (before == value) Check(out == text, "a key that reads the value is left alone");
  Check(install::DetectSyntax(out) == install::DetectSyntax(text), "the syntax stays");
  if (out == text) return 0;  // no byte changed: nothing more to hold it to

  const Changed changed = ChangedSpan(text, out);
  const install::YamlDocument doc = install::ParseYaml(text, "fuzz");
  const auto entry = doc.root && doc.root.IsMap() ? install::FindEntry(doc.root, key, "fuzz", doc)
                                                  : std::optional<install::YamlEntry>();
  if (entry && entry->value.IsScalar()) {
    const bool json = install::DetectSyntax(text) == install::ConfigSyntax::kJson;
    const auto span = install::ScalarSpanOf(doc, entry->value, json, "fuzz");
    Check(changed.begin >= span.begin && changed.end <= span.end,
          "the edit replaces bytes of the old value only");
  } else {
    Check(text.find_first_of("\r\n", changed.begin) >= changed.end,
          "the edit of an absent or null value replaces no line break");
  }
  Check(OtherEntries(out, key) == OtherEntries(text, key), "every other entry reads the same");
  if (!HasKey(text, key) && install::DetectSyntax(text) == install::ConfigSyntax::kYaml) {
    Check(out.compare(0, text.size(), text) == 0, "an absent YAML key is appended");
  }
  return 0;
}
