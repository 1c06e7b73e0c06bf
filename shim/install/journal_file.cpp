#include "shim/install/journal_file.h"

namespace dxshim::install {

std::optional<InstallJournal> LoadJournal(NodeSystem& node, const std::string& path) {
  const auto text = node.ReadFile(path);
  if (!text) return std::nullopt;
  if (const auto why = node.UntrustedOwner(path); !why.empty()) {
    throw NodeError("the install record " + path + " is " + why +
                    ", not by SYSTEM or Administrators: it is not trusted (whoever wrote it could "
                    "make dxshim write any file); check it and remove it");
  }
  try {
    return ReadInstallJournal(*text);
  } catch (const NodeError& e) {
    throw NodeError("the install record " + path + ": " + e.what());
  }
}

void KeepJournal(NodeSystem& node, const std::string& path, const InstallJournal& journal) {
  if (journal.Empty()) {
    node.RemoveFile(path);
  } else {
    node.WriteFile(path, WriteInstallJournal(journal));
  }
}

}  // namespace dxshim::install
