// The runtime endpoint of a kubelet config file (--config), as far as the kubelet stand-in reads
// one: the top-level containerRuntimeEndpoint of a KubeletConfiguration (kubelet.config.k8s.io/
// v1beta1, since Kubernetes 1.27), in JSON (EKS's kubelet-config.json) or YAML (kubeadm's
// config.yaml). Not shared with dxshim's own readers (shim/install): a small reader of its own.
#pragma once

#include <optional>
#include <string>

namespace dxshim::test::node_standin {

// The value, or nothing when the file has none. JSON (the text starts with "{"): the first
// "containerRuntimeEndpoint" key followed by a string, its escapes decoded (nested objects are
// not told apart; KubeletConfiguration has no other field of that name). YAML: a line
// `containerRuntimeEndpoint: VALUE` at column 0, VALUE plain (a comment after " #" dropped),
// '...' or "...".
std::optional<std::string> ConfigRuntimeEndpoint(const std::string& text);

// The top-level healthzPort (kubelet's --healthz-port, which wins over it), read the same way: a
// JSON number's digits, a YAML plain value. kubeadm's config.yaml sets it (10248 by default).
std::optional<std::string> ConfigHealthzPort(const std::string& text);

}  // namespace dxshim::test::node_standin
