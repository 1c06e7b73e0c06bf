# Sourced by node_install_eks_test.sh after node_fixtures.sh: an EKS Windows node as its bootstrap
# makes it. AWS's own Windows bootstrap (the AMI's Start-EKSBootstrap.ps1 and its startup task) is
# not public (awslabs/amazon-eks-ami#960: "The Windows AMI is not currently open-source"); what
# follows is read from the two public sources, and what neither says is marked as assumed:
#   - atg-cloudops/eks-windows-bootstrapper @00bd3f65dee05dbf656611acd6e9f75074a107c7
#     BootstrapperService.cs, a C# re-implementation of the AWS flow for the containerd era (the
#     service shapes, kubelet's arguments, kubelet-config.json, what it starts at each boot);
#   - bgsilvait/EKS @3f601ef473cae9aca092fd7fc06b80cd68b96e28 Windows/Start-EKSBootstrap_117_DSR.ps1,
#     a copy of AWS's docker-era script (the same service host, service names, paths and
#     kubelet-config.json keys; New-Service with no -DependsOn) and Windows/k8s_services (the
#     processes it makes: EKS-WindowsServiceHost.exe kubelet "...\kubelet.exe" ARGS).
# In both, neither kubelet nor kube-proxy depends on any service: ordering is the bootstrap's own.
# usage: eks_node flag|json (the endpoint on kubelet's command line, or in kubelet-config.json)

eks_service_host='C:\Program Files\Amazon\EKS\EKS-WindowsServiceHost.exe'
eks_kubelet='C:\Program Files\kubernetes\kubelet.exe'
eks_kube_proxy='C:\Program Files\kubernetes\kube-proxy.exe'
eks_kubelet_config='C:\ProgramData\kubernetes\kubelet-config.json'
eks_node_name=ip-10-0-1-23.ec2.internal
eks_containerd_endpoint='npipe:////./pipe/containerd-containerd'

# kubelet-config.json as UpdateKubeletConfig writes it (BootstrapperService.cs @00bd3f6): the
# KubeletConfiguration DTO through System.Text.Json (camelCase names, declared order, not
# indented), File.WriteAllTextAsync in ASCII, no newline; clusterDNS the user data's DnsClusterIP.
# With ENDPOINT, a containerRuntimeEndpoint member after the others: no public EKS source writes
# one (assumed: a bootstrap that follows kubelet's deprecation of --container-runtime-endpoint in
# favour of the config file, Kubernetes 1.27).
write_eks_kubelet_config() {  # write_eks_kubelet_config FILE [ENDPOINT]
  local json='{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","address":"0.0.0.0","authentication":{"anonymous":{"enabled":false},"webhook":{"cacheTTL":"2m0s","enabled":true},"x509":{"clientCAFile":"C:\\ProgramData\\Amazon\\EKS\\cluster_ca.crt"}},"authorization":{"mode":"Webhook","webhook":{"cacheAuthorizedTTL":"5m0s","cacheUnauthorizedTTL":"30s"}},"clusterDomain":"cluster.local","hairpinMode":"hairpin-veth","cgroupDriver":"cgroupfs","cgroupRoot":"/","featureGates":{"RotateKubeletServerCertificate":true},"serializeImagePulls":false,"serverTLSBootstrap":true,"clusterDNS":["10.100.0.10"]'
  [ -n "${2:-}" ] && json+=",\"containerRuntimeEndpoint\":\"$2\""
  mkdir -p "$(dirname "$1")"
  printf '%s}' "$json" >"$1"
}

# The kubelet service's command line as RegisterKubernetesServices makes it (BootstrapperService.cs
# @00bd3f6): `sc.exe create "kubelet" binPath= "\"HOST\" kubelet \"KUBELET\" ARGS" start= demand`,
# whose argument sc.exe reads with the C runtime's rules (\" a quote), so the service manager keeps
# the text below. kubeletArgs starts with a space (hence two after kubelet.exe's name) and ends
# with " " + -KubeletExtraArgs of the user data: here --healthz-port=0 (no healthz server: the
# proof needs none, and two tests at once would both want 10248). In the `json` variant the
# --container-runtime-endpoint flag is left out (it is in kubelet-config.json); ENDPOINT stands for
# the bootstrapper's ContainerdPipeEndpoint when given.
eks_kubelet_command_line() {  # eks_kubelet_command_line flag|json [ENDPOINT]
  local args=" --config=\"$eks_kubelet_config\" --cloud-provider=external"
  args+=" --kubeconfig=\"C:\\ProgramData\\kubernetes\\kubeconfig\" --hostname-override=$eks_node_name"
  args+=" --v=1 --resolv-conf=\"\" --enable-debugging-handlers --cgroups-per-qos=false"
  args+=" --enforce-node-allocatable=\"\""
  [ "$1" = flag ] && args+=" --container-runtime-endpoint=\"${2:-$eks_containerd_endpoint}\""
  args+=" --image-credential-provider-bin-dir=\"C:\\Program Files\\Amazon\\EKS\\credential-providers\""
  args+=" --image-credential-provider-config=\"C:\\Program Files\\Amazon\\EKS\\ecr-credential-provider-config.json\""
  args+=" --node-ip=10.0.1.23 --healthz-port=0"
  printf '"%s" kubelet "%s" %s\n' "$eks_service_host" "$eks_kubelet" "$args"
}
# kube-proxy's, the same way (BootstrapperService.cs @00bd3f6 RegisterKubernetesServices:
# kubeProxyArgs joined by " ", the empty -KubeProxyExtraArgs last, hence a trailing space).
eks_kube_proxy_command_line() {
  printf '"%s" kube-proxy "%s" %s\n' "$eks_service_host" "$eks_kube_proxy" \
    "--kubeconfig=\"C:\\ProgramData\\kubernetes\\kubeconfig\" --v=1 --proxy-mode=kernelspace --hostname-override=\"$eks_node_name\" --cluster-cidr=\"10.0.0.0/16\" "
}

# The whole node, its services stopped (reboot starts them as the node's boot does):
#   - containerd: the AMI's service; how the AMI registers it is not public (assumed: `containerd
#     --register-service`, containerd/containerd cmd/containerd/command/service_windows.go
#     registerService @v1.7.27: "<containerd.exe>" --run-service, StartAutomatic, no dependencies;
#     no config.toml: containerd's defaults, its pipe \\.\pipe\containerd-containerd, which the
#     bootstrapper's ContainerdPipeEndpoint names);
#   - kubelet and kube-proxy: EKS-WindowsServiceHost.exe running them (BootstrapperService.cs
#     @00bd3f6 RunScCreate: start= demand, no depend=; its `sc.exe failure` actions are left out);
#   - kubelet-config.json (UpdateKubeletConfig, same file).
eks_node() {  # eks_node flag|json
  put "$eks_service_host" "$eks_kubelet" "$eks_kube_proxy" \
    'C:\Program Files\containerd\containerd.exe'
  if [ "$1" = json ]; then
    write_eks_kubelet_config "$(host_path "$eks_kubelet_config")" "$eks_containerd_endpoint"
  else
    write_eks_kubelet_config "$(host_path "$eks_kubelet_config")"
  fi
  service_create containerd '"C:\Program Files\containerd\containerd.exe" --run-service' auto
  service_create kubelet "$(eks_kubelet_command_line "$1")" demand
  service_create kube-proxy "$(eks_kube_proxy_command_line)" demand
}
eks_services="kube-proxy kubelet dxshim containerd"
# What starts kubelet at each boot: the bootstrapper, an automatic service (atg-cloudops/
# eks-windows-bootstrapper @00bd3f6 Install-Service.ps1: sc.exe create "EKSWindowsBootstrapper"
# ... start= auto), whose ExecuteAsync (BootstrapperService.cs) runs `sc.exe start containerd`, then
# `sc.exe start kubelet` and `sc.exe start kube-proxy` (StartService). Its other steps are left out:
# HNS, kubeconfig and CNI config (nothing a CRI endpoint depends on), sc.exe create (refused: the
# services exist), and kubelet-config.json written again (the same bytes in the `flag` variant; the
# `json` variant's file is not the bootstrapper's).
eks_boot_task=(cmd.exe /c 'sc.exe start containerd & sc.exe start kubelet & sc.exe start kube-proxy')
