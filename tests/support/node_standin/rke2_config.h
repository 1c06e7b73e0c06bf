// The kubelet-arg items of an rke2 config.yaml.
#pragma once

#include <string>
#include <vector>

namespace dxshim::test::node_standin {

// The items of the top-level `kubelet-arg` of an rke2 config.yaml, read line by line as our
// tests write it: a block list (`- "a=b"` / `- a=b` lines, up to the next line that is neither an
// item, a comment nor blank), a flow list `["a=b", c=d]` (on one line or several), or a single
// string. Not a YAML parser: anchors, block scalars, multi-line scalars and nested lists are
// beyond it (config.yaml.d is not read either).
std::vector<std::string> KubeletArgItems(const std::string& yaml);

}  // namespace dxshim::test::node_standin
