// The launchers of the installer's unit tests, on FakeNode: each distribution's kubelet service
// shaped from its public sources (deploy/windows/DISTRIBUTIONS.md cites them), the processes its
// launcher starts, and dxshim answering who made CRI calls through its pipe (FakeProbe). These
// read a kubelet command line by their own simple rules, not by the installer's code; the wine
// tests (tests/e2e/) run the same installer against the launchers' real scripts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "shim/install/install_plan.h"
#include "shim/install/install_step.h"
#include "shim/install/installer.h"
#include "shim/install/system/dxshim_probe.h"
#include "tests/install/fake_node.h"

namespace dxshim::install::test {

inline constexpr char kRecord[] = "C:\\ProgramData\\dxshim\\install-record.json";
inline constexpr char kDxshimConfig[] = "C:\\ProgramData\\dxshim\\dxshim.yaml";
inline constexpr char kDxshimCommand[] =
    "\"C:\\Program Files\\dxshim\\dxshim.exe\" serve --config "
    "\"C:\\ProgramData\\dxshim\\dxshim.yaml\"";
inline constexpr char kNssmKey[] = "SYSTEM\\CurrentControlSet\\Services\\kubelet\\Parameters";
inline constexpr char kContainerdConfig[] = "C:\\Program Files\\containerd\\config.toml";
inline constexpr char kFlagsFile[] = "C:\\var\\lib\\kubelet\\kubeadm-flags.env";
inline constexpr char kInstanceConfig[] = "C:\\var\\lib\\kubelet\\instance-config.yaml";
inline constexpr char kRke2Config[] = "C:\\etc\\rancher\\rke2\\config.yaml";

// The pipe a kubelet command line talks to, by this fake's own rule: its
// --container-runtime-endpoint, else containerRuntimeEndpoint in the file of its --config.
std::string PipeOfKubelet(FakeNode& node, const std::string& command_line);

// dxshim's answers, as the real one gives them: every kubelet.exe whose endpoint is a pipe the
// dxshim service serves has made CRI calls through it since the later of its own start and
// dxshim's; the runtime answers through dxshim when containerd serves dxshim's `runtime`.
class FakeProbe : public DxshimProbe {
 public:
  explicit FakeProbe(FakeNode& node) : node_(node) {}
  std::optional<CriCallers> Callers(const std::string& pipe, std::string& error) override;
  bool RuntimeAnswers(const std::string& pipe, std::chrono::milliseconds timeout) override;
  std::uint32_t answer_as = 0;  // an impostor's answer: this pid, whoever serves

 private:
  FakeNode& node_;
};

// Services start and stop their programs: kubelet.exe by its launcher, containerd and dxshim
// serving the pipes their configuration names.
void PlayLaunchers(FakeNode& node);
// dxshim.yaml, containerd's config.toml (AgentBaker's version 1 template's first tables) and a
// running containerd service, with PlayLaunchers.
void BaseNode(FakeNode& node);

// One distribution's kubelet service put on a BaseNode.
struct Shape {
  std::string name;
  void (*make)(FakeNode&);
};
const std::vector<Shape>& Shapes();
void EksShape(FakeNode& node);
void KubeadmShape(FakeNode& node);
void AksShape(FakeNode& node);
void Rke2Shape(FakeNode& node);
void CapzNativeShape(FakeNode& node);
std::string CapzFlagsFile();  // the kubeadm-flags.env CapzNativeShape starts with
void NssmKubeletShape(FakeNode& node);
void ConfigFileShape(FakeNode& node);

InstallOptions Options(std::vector<std::string>* said = nullptr);
// The plan install makes of `node` with Options() (mode "auto", "endpoint" or "takeover").
InstallPlan PlanOf(FakeNode& node, const std::string& mode = "auto");
// Each step's Describe(), in order.
std::vector<std::string> Described(const std::vector<Step>& steps);
UninstallOptions Undo(std::vector<std::string>* said = nullptr);

// Everything the installer may touch, for byte-for-byte comparisons: values, files, services
// (command line, dependencies, whether they run).
struct Snapshot {
  std::map<std::string, RegistryString> registry;
  std::map<std::string, std::string> files;
  std::map<std::string, std::tuple<std::string, std::vector<std::string>, bool>> services;
  bool operator==(const Snapshot&) const = default;
};
Snapshot Take(const FakeNode& node);
std::string Describe(const Snapshot& a, const Snapshot& b);  // what differs, for messages

std::string Joined(const std::vector<std::string>& lines);

}  // namespace dxshim::install::test
