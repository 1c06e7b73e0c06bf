// rke2's config file (C:\etc\rancher\rke2\config.yaml on Windows): the kubelet args it passes,
// key `kubelet-arg`, a list of strings `name=value` (block list `- "name=value"` / `- name=value`,
// or flow list `["a=b", "c=d"]`) or a single string. rke2 (like k3s) drops a leading `--` of an
// item and adds `--` itself; an item without `=` means `name=true`. Reads one arg and sets one,
// changing only the bytes it must and re-reading the result to prove nothing else changed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dxshim::node {

// The value of kubelet arg `name` (last occurrence; `_` and `-` in names are the same, as kubelet
// reads them), nullopt when absent. Throws EditError when the file does not parse or kubelet-arg
// is neither a string nor a list of strings.
std::optional<std::string> ReadRke2KubeletArg(std::string_view text, std::string_view name);

// The text with kubelet arg `name=value`: every existing item of that name has its value replaced
// in place (unchanged when already so); otherwise an item appended to an existing block list
// (after its last item, with the same indentation, dash and quoting style) or flow list (with the
// same separator), a single string turned into a flow list of it and the new item, or a new
// `kubelet-arg:` block list added at the end (items double-quoted, indented two spaces). Self-
// checked by re-parsing: the arg reads `value`, the other items and top-level keys are unchanged,
// else EditError. Flow-style or multi-document files: EditError.
std::string SetRke2KubeletArg(std::string_view text, std::string_view name, std::string_view value);

}  // namespace dxshim::node
