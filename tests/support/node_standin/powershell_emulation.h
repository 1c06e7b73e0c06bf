// What NSSM's PowerShell would start from kubeadm's StartKubelet.ps1 or AKS's kubeletstart.ps1.
#pragma once

#include <optional>
#include <string>

namespace dxshim::test::node_standin {

// What NSSM's PowerShell would end up starting (there is no PowerShell here): the kubelet.exe in
// NSSM_FOLDER with the flags of the script named by PARAMETERS (`-File SCRIPT`, else the first
// word ending in .ps1). A script that mentions kubeadm-flags.env is kubeadm's StartKubelet.ps1:
// the KUBELET_KUBEADM_ARGS of %SystemDrive%\var\lib\kubelet\kubeadm-flags.env come first (none if
// that file is unreadable: the script's Get-Content fails, Invoke-Expression still runs), then
// the script's literal flags; any other script (AKS's kubeletstart.ps1) gives its literal flags.
std::optional<std::wstring> EmulatedPowerShell(const std::wstring& parameters,
                                               const std::wstring& nssm_folder, std::string& error);

}  // namespace dxshim::test::node_standin
