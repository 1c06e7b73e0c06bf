// The PowerShell stand-in's interpreter (tests/support/node_standin/powershell_*.cpp) on an
// in-memory host: the kubelet command line that each upstream script shape gives, in its
// argument order (sig-windows-tools' StartKubelet.ps1: kubeadm's flags first; image-builder's,
// new and old: kubeadm's last; AKS's kubeletstart.ps1: ConfigArgs, --node-labels,
// --volume-plugin-dir, --windows-priorityclass, --container-runtime-endpoint); PowerShell 5.1's
// native argument passing (quotes around blanks, "" dropped from bare words, empty arguments
// dropped, `-a.b` split); RestartKubelet.ps1's sc.exe calls; the service cmdlets' dependents
// rule; the language (scopes, strings, operators, pipelines, functions, try/catch, errors); and
// that what is not implemented stops the script naming the line and the construct.
#include "tests/support/node_standin/powershell_interpreter.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/node_standin/powershell_fake_host.h"
#include "tests/support/node_standin/powershell_native_arguments.h"
#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {
namespace {

class PowerShellTest : public ::testing::Test {
 protected:
  PowerShellTest() {
    host.AddProgram("C:\\k\\kubelet.exe");
    host.AddProgram("C:\\Windows\\System32\\sc.exe");
    host.AddProgram("C:\\Windows\\System32\\hostname.exe");
    host.program_output["hostname.exe"] = "node-1\r\n";
  }

  int Run(const std::string& text, const std::string& path = "C:\\k\\script.ps1") {
    host.files[path] = text;
    Interpreter ps(host);
    const int code = ps.RunFile(path, {});
    not_implemented = ps.NotImplementedMessage();
    return code;
  }

  // The command lines of the programs the script started.
  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    for (const auto& run : host.runs) lines.push_back(run.command_line);
    return lines;
  }

  FakeHost host;
  std::string not_implemented;
};

// kubeadm's kubeadm-flags.env as kubeadm 1.33 writes it on a CAPZ Windows worker.
constexpr const char* kKubeadmFlags =
    "KUBELET_KUBEADM_ARGS=\"--cloud-provider=external "
    "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
    "--pod-infra-container-image=registry.k8s.io/pause:3.10 --v=2\"\n";

TEST_F(PowerShellTest, SigWindowsToolsStartKubeletPutsKubeadmFlagsFirst) {
  host.directories.insert("C:\\var");
  host.directories.insert("C:\\var\\lib");
  host.directories.insert("C:\\var\\lib\\kubelet");
  host.files["C:\\var\\lib\\kubelet\\kubeadm-flags.env"] = kKubeadmFlags;
  // sig-windows-tools hostprocess/PrepareNode.ps1 @401ee6f generates this (Kubernetes >= 1.27).
  const int code = Run(
      "$FileContent = Get-Content -Path \"/var/lib/kubelet/kubeadm-flags.env\"\n"
      "$global:KubeletArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('\"')\n"
      "\n"
      "$cmd = \"C:\\k\\kubelet.exe  $global:KubeletArgs  "
      "--cert-dir=$env:SYSTEMDRIVE\\var\\lib\\kubelet\\pki  --config=/var/lib/kubelet/config.yaml  "
      "--hostname-override=node-1  --enable-debugging-handlers  --cgroups-per-qos=false  "
      "--enforce-node-allocatable=`\"`\"  --resolv-conf=`\"`\" \"\n"
      "Invoke-Expression $cmd\n");
  EXPECT_EQ(code, 0) << host.err;
  ASSERT_EQ(host.runs.size(), 1u) << host.err;
  // Invoke-Expression re-parses the line: `""` inside a bare word is an empty string, so kubelet
  // gets `--resolv-conf=` (PowerShell 5.1 passes no quotes for it).
  EXPECT_EQ(host.runs[0].command_line,
            "\"C:\\k\\kubelet.exe\" --cloud-provider=external "
            "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
            "--pod-infra-container-image=registry.k8s.io/pause:3.10 --v=2 "
            "--cert-dir=C:\\var\\lib\\kubelet\\pki --config=/var/lib/kubelet/config.yaml "
            "--hostname-override=node-1 --enable-debugging-handlers --cgroups-per-qos=false "
            "--enforce-node-allocatable= --resolv-conf=");
  EXPECT_FALSE(host.runs[0].capture) << "its output goes to the console, not to PowerShell";
}

TEST_F(PowerShellTest, ImageBuilderNewStartKubeletSplatsWithKubeadmFlagsLast) {
  host.MakeDirectory("C:\\var\\lib\\kubelet", not_implemented);
  host.files["C:\\var\\lib\\kubelet\\kubeadm-flags.env"] = kKubeadmFlags;
  // image-builder images/capi/ansible/windows/roles/kubernetes/templates/StartKubelet.ps1
  // @ae63061 (14be687d3), kubernetes_install_path c:\k.
  const int code =
      Run("$FileContent = Get-Content -Path \"/var/lib/kubelet/kubeadm-flags.env\" -Raw\n"
          "$kubeAdmArgs = ($FileContent -replace "
          "'(?s)^\\s*KUBELET_KUBEADM_ARGS=(\"?)(.*?)\\1\\s*$', '$2').Trim()\n"
          "$argList = @(\n"
          "    \"--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki\",\n"
          "    \"--hostname-override=$(hostname)\",\n"
          "    \"--cgroups-per-qos=false\",\n"
          "    '--enforce-node-allocatable=\"\"',\n"
          "    '--resolv-conf=\"\"'\n"
          ")\n"
          "if ($kubeAdmArgs) {\n"
          "    $argList += $kubeAdmArgs -split '\\s+'\n"
          "}\n"
          "$kubeletExe = \"c:\\k\\kubelet.exe\"\n"
          "$logDir = \"$env:SYSTEMDRIVE\\var\\log\\kubelet\"\n"
          "New-Item -ItemType Directory -Force -Path $logDir | Out-Null\n"
          "\"$(Get-Date -Format o) $kubeletExe $($argList -join ' ')\" | Out-File -Append "
          "-FilePath \"$logDir\\start-kubelet.log\"\n"
          "& $kubeletExe @argList\n");
  EXPECT_EQ(code, 0) << host.err;
  const std::string expected_args =
      "--cert-dir=C:/var/lib/kubelet/pki --hostname-override=node-1 --cgroups-per-qos=false "
      "--enforce-node-allocatable=\"\" --resolv-conf=\"\" --cloud-provider=external "
      "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
      "--pod-infra-container-image=registry.k8s.io/pause:3.10 --v=2";
  ASSERT_EQ(host.runs.size(), 2u) << host.err;  // hostname.exe, then kubelet.exe
  EXPECT_TRUE(host.runs[0].capture);
  EXPECT_EQ(host.runs[1].command_line, "\"c:\\k\\kubelet.exe\" " + expected_args);
  // Out-File -Append: UTF-16 with a byte order mark, one line.
  const auto bytes = host.ReadFile("C:\\var\\log\\kubelet\\start-kubelet.log");
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->substr(0, 2), "\xFF\xFE");
  EXPECT_EQ(DecodeText(*bytes),
            "2024-05-06T07:08:09.1234567+00:00 c:\\k\\kubelet.exe " + expected_args + "\r\n");
}

TEST_F(PowerShellTest, ImageBuilderOldStartKubeletInvokesWithKubeadmFlagsLast) {
  host.MakeDirectory("C:\\var\\lib\\kubelet", not_implemented);
  host.files["C:\\var\\lib\\kubelet\\kubeadm-flags.env"] = kKubeadmFlags;
  // The same template before 14be687d3 (fede56207).
  const int code = Run(
      "$FileContent = Get-Content -Path \"/var/lib/kubelet/kubeadm-flags.env\"\n"
      "$kubeAdmArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('\"')\n"
      "\n"
      "$args = \"--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki\",\n"
      "        \"--hostname-override=$(hostname)\",\n"
      "        \"--enforce-node-allocatable=`\"`\"\",\n"
      "        \"--resolv-conf=`\"`\"\"\n"
      "\n"
      "$kubeletCommandLine = \"c:\\k\\kubelet.exe \" + ($args -join \" \") + \" $kubeAdmArgs\"\n"
      "Invoke-Expression $kubeletCommandLine\n");
  EXPECT_EQ(code, 0) << host.err;
  ASSERT_EQ(host.runs.size(), 2u) << host.err;
  EXPECT_EQ(host.runs[1].command_line,
            "\"c:\\k\\kubelet.exe\" --cert-dir=C:/var/lib/kubelet/pki --hostname-override=node-1 "
            "--enforce-node-allocatable= --resolv-conf= --cloud-provider=external "
            "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
            "--pod-infra-container-image=registry.k8s.io/pause:3.10 --v=2");
}

// AgentBaker's kubeclusterconfig.json, the parts kubeletstart.ps1 reads.
std::string ClusterConfig(const std::string& config_args, const std::string& release) {
  return "{\"Cni\":{\"Name\":\"azure\"},\"Install\":{\"Destination\":\"c:\\\\k\"},"
         "\"Services\":{\"IsSkipCleanupNetwork\":true},"
         "\"Kubernetes\":{\"Source\":{\"Release\":\"" +
         release +
         "\"},"
         "\"ControlPlane\":{\"IpAddress\":\"10.0.0.4\"},\"Network\":{\"DnsIp\":\"10.0.0.10\"},"
         "\"Kubelet\":{\"NodeLabels\":\"agentpool=win,kubernetes.azure.com/role=agent\","
         "\"ConfigArgs\":[" +
         config_args +
         "],"
         "\"SecureTLSBootstrapArgs\":{\"Enabled\":false}}}}";
}

// AgentBaker staging/cse/windows/provisioningscripts/kubeletstart.ps1 @06836ee, the lines that
// build and start kubelet.
constexpr const char* kAksKubeletStart =
    "$Global:ClusterConfiguration = ConvertFrom-Json ((Get-Content "
    "\"c:\\k\\kubeclusterconfig.json\" -ErrorAction Stop) | out-string)\n"
    "$global:KubeBinariesVersion = $Global:ClusterConfiguration.Kubernetes.Source.Release\n"
    "$global:KubeDir = $Global:ClusterConfiguration.Install.Destination\n"
    "$global:NetworkPlugin = $Global:ClusterConfiguration.Cni.Name\n"
    "$global:KubeletNodeLabels = $Global:ClusterConfiguration.Kubernetes.Kubelet.NodeLabels\n"
    "$global:IsSkipCleanupNetwork = "
    "[System.Convert]::ToBoolean($Global:ClusterConfiguration.Services.IsSkipCleanupNetwork)\n"
    "$global:EnableSecureTLSBootstrapping = [System.Convert]::ToBoolean("
    "$Global:ClusterConfiguration.Kubernetes.Kubelet.SecureTLSBootstrapArgs.Enabled)\n"
    "$global:HNSModule = \"c:\\k\\hns.v2.psm1\"\n"
    "ipmo $global:HNSModule\n"
    "$global:VolumePluginDir = [Io.path]::Combine($global:KubeDir, \"volumeplugins\")\n"
    "mkdir $global:VolumePluginDir -Force\n"
    "$KubeletArgList = $Global:ClusterConfiguration.Kubernetes.Kubelet.ConfigArgs\n"
    "$KubeletArgList += \"--node-labels=$global:KubeletNodeLabels\"\n"
    "$KubeletArgList += \"--volume-plugin-dir=$global:VolumePluginDir\"\n"
    "if (-not ($KubeletArgList | Where-Object { $_ -like \"--windows-priorityclass=*\" })) {\n"
    "    $KubeletArgList += \"--windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS\"\n"
    "}\n"
    "$KubeletArgList += @(\"--container-runtime-endpoint=npipe://./pipe/containerd-containerd\")\n"
    "if ($global:KubeBinariesVersion -lt \"1.27.0\") {\n"
    "    $KubeletArgList += @(\"--container-runtime=remote\")\n"
    "}\n"
    "$KubeletArgListStr = \"\"\n"
    "$KubeletArgList | Foreach-Object {\n"
    "    if ($KubeletArgListStr.length -gt 0) {\n"
    "        $KubeletArgListStr = $KubeletArgListStr + \", \"\n"
    "    }\n"
    "    # what's going on here re tick marks (a quote in a comment)\n"
    "    $KubeletArgListStr = $KubeletArgListStr + \"`\"\" + $_.Replace(\"`\"`\"\", "
    "\"`\"`\"`\"`\"\") + \"`\"\"\n"
    "}\n"
    "$KubeletArgListStr = \"@($KubeletArgListStr`)\"\n"
    "netsh advfirewall set allprofiles state off\n"
    "Write-Host \"Stopping kubeproxy service\"\n"
    "Stop-Service kubeproxy\n"
    "if ($global:NetworkPlugin -eq \"azure\") {\n"
    "    Restart-Service Kubeproxy -Force\n"
    "    $env:AZURE_ENVIRONMENT_FILEPATH = \"c:\\k\\azurestackcloud.json\"\n"
    "}\n"
    "if (Test-Path \"$global:KubeDir\\runprocess.dll\") {\n"
    "    [System.Reflection.Assembly]::LoadFrom(\"$global:KubeDir\\runprocess.dll\")\n"
    "}\n"
    "else {\n"
    "    Add-Type -Path \"$global:KubeDir\\run-process.cs\"\n"
    "}\n"
    "$exe = \"$global:KubeDir\\kubelet.exe\"\n"
    "$args = ($KubeletArgList -join \" \")\n"
    "[RunProcess.exec]::RunProcess($exe, $args, "
    "[System.Diagnostics.ProcessPriorityClass]::AboveNormal)\n";

void AddRunProcess(FakeHost& host) {
  host.files["C:\\k\\run-process.cs"] =
      "namespace RunProcess { public static class exec { public static int RunProcess(string "
      "executable, string args = \"\") { return 0; } } }";
}

TEST_F(PowerShellTest, AksKubeletStartOrdersConfigArgsThenItsOwnFlags) {
  host.files["C:\\k\\kubeclusterconfig.json"] =
      ClusterConfig("\"--healthz-port=10248\",\"--max-pods=30\"", "1.29.2");
  AddRunProcess(host);
  host.services["Kubelet"].status = "Running";
  host.services["Kubeproxy"] = {"Running", {"Kubelet"}};
  host.program_exit["kubelet.exe"] = 7;
  const int code = Run(kAksKubeletStart, "C:\\k\\kubeletstart.ps1");
  EXPECT_EQ(code, 0) << host.err << not_implemented;
  ASSERT_FALSE(host.runs.empty()) << host.err << not_implemented;
  const auto& kubelet = host.runs.back();
  EXPECT_EQ(kubelet.command_line,
            "\"c:\\k\\kubelet.exe\" --healthz-port=10248 --max-pods=30 "
            "--node-labels=agentpool=win,kubernetes.azure.com/role=agent "
            "--volume-plugin-dir=c:\\k\\volumeplugins "
            "--windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS "
            "--container-runtime-endpoint=npipe://./pipe/containerd-containerd");
  EXPECT_EQ(kubelet.directory, "c:\\k");
  EXPECT_TRUE(kubelet.above_normal);
  EXPECT_FALSE(kubelet.capture);
  // RunProcess's exit code is the script's last output, on the console.
  EXPECT_NE(host.out.find("\r\n7\r\n"), std::string::npos) << host.out;
  EXPECT_EQ(host.KindOf("C:\\k\\volumeplugins"), PathKind::kDirectory);
  // Stop-Service kubeproxy, then Restart-Service Kubeproxy -Force: stop (already), start.
  EXPECT_EQ(host.service_calls, (std::vector<std::string>{"stop Kubeproxy", "start Kubeproxy"}));
  EXPECT_EQ(host.environment["AZURE_ENVIRONMENT_FILEPATH"], "c:\\k\\azurestackcloud.json");
  // netsh is not on this host's PATH: a statement-terminating error, and the script goes on.
  EXPECT_NE(host.err.find("The term 'netsh' is not recognized"), std::string::npos) << host.err;
}

TEST_F(PowerShellTest, AksKubeletStartKeepsAGivenPriorityClassAndAddsRemoteBefore127) {
  host.files["C:\\k\\kubeclusterconfig.json"] =
      ClusterConfig("\"--windows-priorityclass=HIGH_PRIORITY_CLASS\",\"--v=2\"", "1.26.3");
  AddRunProcess(host);
  host.services["Kubeproxy"].status = "Stopped";
  EXPECT_EQ(Run(kAksKubeletStart, "C:\\k\\kubeletstart.ps1"), 0) << host.err << not_implemented;
  ASSERT_FALSE(host.runs.empty());
  EXPECT_EQ(host.runs.back().command_line,
            "\"c:\\k\\kubelet.exe\" --windows-priorityclass=HIGH_PRIORITY_CLASS --v=2 "
            "--node-labels=agentpool=win,kubernetes.azure.com/role=agent "
            "--volume-plugin-dir=c:\\k\\volumeplugins "
            "--container-runtime-endpoint=npipe://./pipe/containerd-containerd "
            "--container-runtime=remote");
}

TEST_F(PowerShellTest, AksKubeletStartWithoutItsConfigStopsWithExitCode1) {
  AddRunProcess(host);
  EXPECT_EQ(Run(kAksKubeletStart, "C:\\k\\kubeletstart.ps1"), 1);
  EXPECT_TRUE(host.runs.empty());
  EXPECT_NE(host.err.find("kubeclusterconfig.json' because it does not exist"), std::string::npos)
      << host.err;
}

TEST_F(PowerShellTest, ImageBuilderRestartKubeletRecreatesTheServiceWithContainerdAsDependency) {
  host.MakeDirectory("C:\\var\\lib\\kubelet", not_implemented);
  host.files["C:\\var\\lib\\kubelet\\kubeadm-flags.env"] =
      "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
      "--v=2\"\n";
  host.services["kubelet"] = {"Running", {"containerd"}};
  host.on_run = [this](const std::string& program, const std::string& line) {
    if (program == "sc.exe" && line.find(" delete kubelet") != std::string::npos) {
      host.services.erase("kubelet");
    }
  };
  // image-builder templates/RestartKubelet.ps1 @ae63061 (its sc.exe part).
  const int code = Run(
      "$FileContent = Get-Content -Path \"$env:SYSTEMDRIVE/var/lib/kubelet/kubeadm-flags.env\"\n"
      "$kubeAdmArgs = $FileContent.TrimStart('KUBELET_KUBEADM_ARGS=').Trim('\"')\n"
      "$args = \"--cert-dir=$env:SYSTEMDRIVE/var/lib/kubelet/pki\",\n"
      "        \"--enforce-node-allocatable=`\"`\"\",\n"
      "        \"--windows-service\"\n"
      "$KubeletArgListStr = ($args -join \" \") + \" $kubeAdmArgs\"\n"
      "$KubeletArgListStr = $KubeletArgListStr.Replace(\"`\"\", \"\\`\"\")\n"
      "$KubeletCommandLine =  \"`\"\" + \"\\`\"\" + \"$env:SYSTEMDRIVE\\k\\kube-log-runner.exe\" + "
      "\"\\`\" \" + \"--log-file=/var/log/kubelet/kubelet.err.log \" + "
      "\"$env:SYSTEMDRIVE\\k\\kubelet.exe \" + $KubeletArgListStr + \"`\"\"\n"
      "$null = sc.exe stop kubelet\n"
      "$null = sc.exe delete kubelet\n"
      "for ($i = 0; $i -lt 10; $i++) {\n"
      "\t$service = Get-Service -Name kubelet -ErrorAction SilentlyContinue\n"
      "\tif ($null -eq $service) {\n"
      "\t\tWrite-Host \"kubelet service deleted successfully, restarting\"\n"
      "\t\tsc.exe create kubelet binPath= $KubeletCommandLine start= auto depend= containerd\n"
      "\t\tsc.exe start kubelet\n"
      "\t\treturn\n"
      "\t}\n"
      "\tStart-Sleep -Seconds 3\n"
      "}\n"
      "Write-Host \"kubelet service failed to restart.\"\n");
  EXPECT_EQ(code, 0) << host.err << not_implemented;
  // The pre-quoted argument has no blank outside its quotes: PowerShell passes it as it is, and
  // sc.exe's argument parser gives back `"C:\k\kube-log-runner.exe" ... --enforce...=""`.
  EXPECT_EQ(Lines(), (std::vector<std::string>{
                         "\"C:\\Windows\\System32\\sc.exe\" stop kubelet",
                         "\"C:\\Windows\\System32\\sc.exe\" delete kubelet",
                         "\"C:\\Windows\\System32\\sc.exe\" create kubelet binPath= "
                         "\"\\\"C:\\k\\kube-log-runner.exe\\\" "
                         "--log-file=/var/log/kubelet/kubelet.err.log C:\\k\\kubelet.exe "
                         "--cert-dir=C:/var/lib/kubelet/pki --enforce-node-allocatable=\\\"\\\" "
                         "--windows-service "
                         "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
                         "--v=2\" start= auto depend= containerd",
                         "\"C:\\Windows\\System32\\sc.exe\" start kubelet"}));
  EXPECT_TRUE(host.runs[0].capture) << "$null = sc.exe ...: its output is taken and dropped";
  EXPECT_FALSE(host.runs[2].capture);
  EXPECT_EQ(host.out, "kubelet service deleted successfully, restarting\r\n");
}

TEST(NativeArguments, QuoteAsWindowsPowerShell51Does) {
  const auto value = [](const std::string& text) {
    NativeArgument arg;
    arg.has_value = true;
    arg.value = Value::String(text);
    return arg;
  };
  EXPECT_EQ(NativeArguments({value("a b"), value("c")}), "\"a b\" c");
  EXPECT_EQ(NativeArguments({value("C:\\Program Files\\")}), "\"C:\\Program Files\\\\\"");
  EXPECT_EQ(NativeArguments({value("a"), value(""), value("b")}), "a  b");
  EXPECT_EQ(NativeArguments({value("--x=\"a b\"")}), "--x=\"a b\"");
  EXPECT_EQ(NativeArguments({value("--x=\\\"a b")}), "\"--x=\\\"a b\"");
  NativeArgument list;
  list.has_value = true;
  list.comma_list = true;
  list.value = Value::Array({Value::String("a"), Value::String("b c")});
  EXPECT_EQ(NativeArguments({list}), "a,\"b c\"");
  NativeArgument parameter;
  parameter.is_parameter = true;
  parameter.parameter_text = "-Confirm:";
  parameter.has_value = true;
  parameter.value = Value::Bool(false);
  EXPECT_EQ(NativeArguments({parameter}), "-Confirm:False");
  EXPECT_EQ(ProcessCommandLine("C:\\k\\kubelet.exe", ""), "\"C:\\k\\kubelet.exe\"");
  EXPECT_EQ(ProcessCommandLine("\"C:\\x.exe\"", "a"), "\"C:\\x.exe\" a");
}

TEST_F(PowerShellTest, CommandWordsFollowPowerShellsTokenizer) {
  host.AddProgram("C:\\k\\show.exe");
  EXPECT_EQ(Run("$v = 'x y'\n"
                "C:\\k\\show.exe --a=b -Dfoo.bar=1 a\"b c\"d 'q'r $v --n=$v `$v -n:1 x,y,'z w' "
                "--e=\"\" -- # comment\n"),
            0)
      << host.err << not_implemented;
  ASSERT_EQ(host.runs.size(), 1u);
  // `-Dfoo.bar=1`: a parameter token ends at the dot (PowerShell issue #6291); a quoted part of
  // a bare word loses its quotes; 'q'r is two arguments; a blank in a value is quoted.
  EXPECT_EQ(host.runs[0].command_line,
            "\"C:\\k\\show.exe\" --a=b -Dfoo .bar=1 \"ab cd\" q r \"x y\" \"--n=x y\" $v -n:1 "
            "x,y,\"z w\" --e= --");
}

TEST_F(PowerShellTest, ParametersWithDigitsAndFunctions) {
  // kubeproxystart.ps1's Compare-SemanticVersion: -Version1 is one parameter (the grammar reads a
  // parameter -Version and a redirection).
  EXPECT_EQ(Run("function Compare-SemanticVersion {\n"
                "    [CmdletBinding()]\n"
                "    param (\n"
                "        [Parameter(Mandatory=$true, Position=0)]\n"
                "        [string]$Version1,\n"
                "        [Parameter(Mandatory=$true, Position=1)]\n"
                "        [string]$Version2\n"
                "    )\n"
                "    $version1Parts = $Version1.Split(\".\")\n"
                "    $version2Parts = $Version2.Split(\".\")\n"
                "    for ($i = 0; $i -lt 3; $i++) {\n"
                "        $a = if ($i -lt $version1Parts.Count) { [int]$version1Parts[$i] } "
                "else { 0 }\n"
                "        $b = [int]$version2Parts[$i]\n"
                "        if ($a -lt $b) { return -1 } elseif ($a -gt $b) { return 1 }\n"
                "    }\n"
                "    return 0\n"
                "}\n"
                "Write-Host (Compare-SemanticVersion -Version1 \"1.29.2\" -Version2 \"1.25.0\")\n"
                "Write-Host (Compare-SemanticVersion 1.24.0 1.25.0)\n"
                "function f ($message) { \"[$message][$($args -join ',')]\" }\n"
                "f one two three\n"),
            0)
      << host.err << not_implemented;
  EXPECT_EQ(host.out, "1\r\n-1\r\n[one][two,three]\r\n");
}

TEST_F(PowerShellTest, ScopesVariablesAndStrings) {
  host.environment["COMPUTERNAME"] = "NODE-1";
  EXPECT_EQ(Run("$global:g = 1\n"
                "$s = 'script'\n"
                "function Set-It { $global:g = 2; $s = 'local'; $script:t = 3 }\n"
                "Set-It\n"
                "\"$g $s $t\"\n"
                "$env:NEW_VAR = \"v$($g + 1)\"\n"
                "\"${env:COMPUTERNAME}|$env:NEW_VAR|$Global:g.conf|`$g|'q''s'|$(1,2)|\"\n"
                "'single $g ''quoted'''\n"
                "$a = @(); $a += 'x'; $a += @('y', 'z'); $a.Count; $a[-1]\n"
                "$h = @{ K = 'v' }; $h.k; $h['K'] = 'w'; $h.K; $h.Count\n"
                "$x = $null; $x += 'str'; $x.GetType\n"),
            kNotImplementedExitCode);
  EXPECT_EQ(host.out,
            "2 script 3\r\nNODE-1|v3|2.conf|$g|'q''s'|1 2|\r\nsingle $g 'quoted'\r\n3\r\nz\r\n"
            "v\r\nw\r\n1\r\n");
  EXPECT_EQ(host.environment["NEW_VAR"], "v3");
  EXPECT_NE(not_implemented.find("script.ps1:11:"), std::string::npos) << not_implemented;
  EXPECT_NE(not_implemented.find("the property GetType of a System.String"), std::string::npos)
      << not_implemented;
}

TEST_F(PowerShellTest, OperatorsAndMethods) {
  EXPECT_EQ(
      Run("'a:b::c' -split ':' -join '|'\n"
          "(-split '  a  b ') -join ','\n"
          "'KUBELET_X' -replace '^kubelet_', 'k-'\n"
          "'abc' -like 'A*'; 'abc' -notlike '*b'; 'abc' -match '^(a)(b)'; $Matches[2]\n"
          "@('--a', '--windows-priorityclass=x', '--b') -like '--windows*'\n"
          "@(1, 2, 3) -contains 2; 2 -in @(1, 3); 1 -eq '1'; '1.27.0' -lt '1.9'\n"
          "'  x  '.Trim() + '|' + 'xxaxx'.TrimStart('x') + '|' + 'a.b.c'.Split('.')[1]\n"
          "'AbC'.ToLower() + 'abc'.Substring(1) + 'a\"\"b'.Replace('\"\"', '\"')\n"
          "[System.Convert]::ToBoolean('True'); [Io.Path]::Combine('c:\\k', 'cni', 'x.conf')\n"
          "[string]::IsNullOrEmpty($null); 7 / 2; 6 / 2; 'ab' * 2; -not 0; !1\n"
          "[System.Convert]::ToBoolean('maybe')\n"
          "'after'\n"),
      0)
      << host.err << not_implemented;
  EXPECT_EQ(
      host.out,
      "a|b||c\r\na,b\r\nk-X\r\nTrue\r\nTrue\r\nTrue\r\nb\r\n--windows-priorityclass=x\r\n"
      "True\r\nFalse\r\nTrue\r\nTrue\r\nx|axx|b\r\nabcbca\"b\r\nTrue\r\nc:\\k\\cni\\x.conf\r\n"
      "True\r\n3.5\r\n3\r\nabab\r\nTrue\r\nFalse\r\nafter\r\n");
  // A .NET method's exception ends its statement only.
  EXPECT_NE(host.err.find("Exception calling \"ToBoolean\" with \"1\" argument(s): \"String was "
                          "not recognized as a valid Boolean.\""),
            std::string::npos)
      << host.err;
}

TEST_F(PowerShellTest, PipelinesAndJson) {
  host.files["C:\\k\\config.json"] =
      "{\"A\": {\"List\": [\"x\", \"y\"], \"Flag\": true, \"N\": 3}, \"Names\": [\"azure\"]}";
  host.files["C:\\k\\lines.txt"] = "one\r\ntwo\r\nthree\r\n";
  EXPECT_EQ(Run("$c = ConvertFrom-Json ((Get-Content 'c:\\k\\config.json') | out-string)\n"
                "$c.A.List -join '+'; $c.a.flag; $c.A.N + 1; $c.Missing.Deeper\n"
                "Get-Content C:\\k\\lines.txt | Where-Object { $_ -ne 'two' } | ForEach-Object { "
                "\"<$_>\" }\n"
                "(Get-Content C:\\k\\lines.txt).Count; (Get-Content C:\\k\\lines.txt -Raw).Length\n"
                "Get-Content C:\\k\\lines.txt | Select-Object -First 2 | Select-String 'o$'\n"
                "$objects = $c, $c\n"
                "($objects | ? Names -EQ 'azure' | Select-Object -First 1 -ExpandProperty A).N\n"
                "$count = 0; 1..3\n"),
            kNotImplementedExitCode);
  EXPECT_EQ(host.out, "x+y\r\nTrue\r\n4\r\n<one>\r\n<three>\r\n3\r\n17\r\ntwo\r\n3\r\n");
  EXPECT_NE(not_implemented.find("script.ps1:8:"), std::string::npos) << not_implemented;
}

TEST_F(PowerShellTest, ErrorsAndErrorActions) {
  // A non-terminating error goes on; -ErrorAction Stop ends the script (exit code 1); try/catch
  // catches it; $ErrorActionPreference Stop makes a statement-terminating error end it too.
  EXPECT_EQ(Run("Get-Content C:\\nope.txt\n"
                "'next'\n"
                "try { Get-Content C:\\nope.txt -ErrorAction Stop; 'not here' } "
                "catch { \"caught: $_\" } finally { 'finally' }\n"
                "try { throw 'boom' } catch { \"caught $_\" }\n"
                "Get-Service -Name nosuch -ErrorAction SilentlyContinue\n"
                "nosuch.exe\n"
                "'after a missing program'\n"
                "$ErrorActionPreference = 'Stop'\n"
                "nosuch.exe\n"
                "'never'\n"),
            1);
  EXPECT_EQ(host.out,
            "next\r\ncaught: Get-Content : Cannot find path 'C:\\nope.txt' because it does not "
            "exist.\r\nfinally\r\ncaught boom\r\nafter a missing program\r\n");
  EXPECT_NE(host.err.find("Get-Content : Cannot find path 'C:\\nope.txt' because it does not "
                          "exist.\r\nAt C:\\k\\script.ps1:1:1"),
            std::string::npos)
      << host.err;
  EXPECT_NE(host.err.find("The term 'nosuch.exe' is not recognized"), std::string::npos);
  EXPECT_EQ(Run("'a'\nexit 5\n'b'\n"), 5);
  EXPECT_EQ(Run("Get-Content C:\\nope.txt -ErrorAction Stop\n'b'\n"), 1);
}

TEST_F(PowerShellTest, ServiceCmdletsFollowPowerShellAndTheServiceManager) {
  host.services["containerd"].status = "Stopped";
  host.services["kubelet"] = {"Stopped", {"containerd"}};
  host.services["kubeproxy"] = {"Stopped", {"kubelet"}};
  EXPECT_EQ(Run("Start-Service kubeproxy\n"
                "Stop-Service kubelet\n"
                "(Get-Service kubelet).Status\n"
                "Stop-Service kubelet -Force\n"
                "(Get-Service -Name kubeproxy).Status\n"
                "Start-Service kubeproxy\n"
                "Restart-Service kubelet -Force\n"
                "Stop-Service nosuch\n"
                "'end'\n"),
            0)
      << not_implemented;
  // The manager (the fake, as Windows') starts the dependencies; Restart-Service starts the
  // dependents it stopped first, then the service itself.
  EXPECT_EQ(host.service_calls,
            (std::vector<std::string>{"start containerd", "start kubelet", "start kubeproxy",
                                      "stop kubeproxy", "stop kubelet", "start kubelet",
                                      "start kubeproxy", "stop kubeproxy", "stop kubelet",
                                      "start kubelet", "start kubeproxy"}));
  EXPECT_EQ(host.out, "Running\r\nStopped\r\nend\r\n");
  EXPECT_NE(host.err.find("Stop-Service : Cannot stop service 'kubelet (kubelet)' because it has "
                          "dependent services. It can only be stopped if the Force flag is set."),
            std::string::npos)
      << host.err;
  EXPECT_NE(host.err.find("Cannot find any service with service name 'nosuch'."),
            std::string::npos);
}

TEST_F(PowerShellTest, RedirectionsWriteUtf16AsOutFile) {
  // kubeproxystart.ps1's `if ($a.Count > $b.Count)` is a redirection into a file named 2.
  EXPECT_EQ(Run("'x' > C:\\k\\out.txt\n'y' >> C:\\k\\out.txt\n"
                "$a = 1, 2, 3; $b = 1, 2\n"
                "if ($a.Count > $b.Count) { 'never' } else { 'else' }\n"
                "Write-Output 'w' > $null\n"),
            0)
      << not_implemented;
  EXPECT_EQ(host.files["C:\\k\\out.txt"], std::string("\xFF\xFEx\0\r\0\n\0y\0\r\0\n\0", 14));
  EXPECT_EQ(host.Text("C:\\k\\2"), "3\r\n");
  EXPECT_EQ(host.out, "else\r\n");
}

TEST_F(PowerShellTest, WhatTheInstallScriptsUse) {
  host.directories.insert("C:\\r");
  host.files["C:\\r\\a.exe"] = "one";
  host.files["C:\\r\\b.exe.old"] = "two";
  EXPECT_EQ(Run("Set-StrictMode -Version Latest\n"
                "Join-Path 'C:\\r\\' '\\x.ps1'\n"
                "$h = (Get-FileHash -Algorithm SHA256 C:\\r\\a.exe).Hash\n"
                "Copy-Item C:\\r\\a.exe C:\\r\\c.exe; Move-Item -Force C:\\r\\c.exe C:\\r\\d.exe\n"
                "(Get-FileHash C:\\r\\d.exe).Hash -eq $h; Test-Path C:\\r\\c.exe\n"
                "(Get-ChildItem C:\\r\\*.old).Name\n"
                "if ('containerd v1.7.20 x' -notmatch 'v?(\\d+)\\.(\\d+)\\.(\\d+)') { 'no' }\n"
                "$v = [version]\"$($Matches[1]).$($Matches[2]).$($Matches[3])\"\n"
                "$v -lt [version]'1.10.0'; $v.Minor\n"
                "$o = [pscustomobject]@{ key = 'k'; code = 3 }\n"
                "($o | ConvertTo-Json | ConvertFrom-Json).code\n"
                "(Get-Acl C:\\r).GetOwner([System.Security.Principal.SecurityIdentifier]).Value\n"
                "[Environment]::OSVersion.Version.Build\n"
                "$o.missing\n"),
            0);  // statement-terminating errors: the script goes on
  EXPECT_EQ(host.out,
            "C:\\r\\x.ps1\r\nTrue\r\nFalse\r\nb.exe.old\r\nTrue\r\n7\r\n3\r\nS-1-5-32-544\r\n"
            "20348\r\n");
  EXPECT_NE(host.err.find("The property 'missing' cannot be found"), std::string::npos) << host.err;
  EXPECT_EQ(Run("Set-StrictMode -Version Latest\n$never\n'after'\n"), 0);
  EXPECT_NE(host.err.find("The variable '$never' cannot be retrieved"), std::string::npos)
      << host.err;
}

TEST_F(PowerShellTest, WhatIsNotImplementedStopsTheScriptAndNamesIt) {
  EXPECT_EQ(Run("'before'\ntry { Get-NetIPAddress } catch { 'caught' }\n'after'\n"),
            kNotImplementedExitCode);
  EXPECT_EQ(host.out, "before\r\n");
  EXPECT_EQ(not_implemented,
            "C:\\k\\script.ps1:2:7: not implemented: the command Get-NetIPAddress");
  EXPECT_EQ(Run("switch (1) { 1 { 'one' } }\n"), kNotImplementedExitCode);
  EXPECT_NE(not_implemented.find("the statement switch_statement"), std::string::npos)
      << not_implemented;
  EXPECT_EQ(Run("'{0}' -f 1\n"), kNotImplementedExitCode);
  EXPECT_EQ(Run("Stop-Service kubelet -PassThru\n"), kNotImplementedExitCode);
  EXPECT_EQ(Run("ls C:\\k\n"), kNotImplementedExitCode);
  EXPECT_EQ(not_implemented, "C:\\k\\script.ps1:1:1: not implemented: the alias ls");
}

}  // namespace
}  // namespace dxshim::test::node_standin::powershell
