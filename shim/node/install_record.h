// The record `dxshim install` writes before it changes anything
// (%ProgramData%/dxshim/install-record.json): every change with its value before and after, the
// mode, and whether install created the dxshim service. Uninstall undoes exactly this. Values are
// kept as base64 next to a readable summary, so that a file comes back byte for byte (CRLF, no BOM,
// ...).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shim/node/node_change.h"

namespace dxshim::node {

struct InstallRecord {
  std::string mode;  // "endpoint" or "takeover"
  std::string launcher;
  std::string restart;  // the service restarted for the change ("kubelet", "rke2", "containerd")
  std::string kubelet_service;     // the service that runs kubelet ("kubelet", "rke2")
  std::string containerd_service;  // the service that runs containerd ("containerd", "rke2")
  bool created_service = false;
  std::vector<NodeChange> changes;

  // Adds the changes of a later install: a target already recorded keeps its first `before`
  // (the node as it was before dxshim) and takes the new `after`.
  void Merge(const std::vector<NodeChange>& later);
};

std::string WriteInstallRecord(const InstallRecord& record);
// Throws NodeError naming what is wrong with the text.
InstallRecord ReadInstallRecord(const std::string& text);

}  // namespace dxshim::node
