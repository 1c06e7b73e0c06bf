#include "shim/cli/rewrite_command.h"

#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config/serve_config.h"
#include "devices/device_source.h"
#include "devices/dxshim_keys.h"
#include "devices/make_device_source.h"
#include "shim/cli/json_document.h"
#include "shim/gpu/container_decision.h"
#include "shim/ledger/ledger.h"

namespace dxshim {
namespace {

namespace po = boost::program_options;

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(path + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

YAML::Node LoadJson(const std::string& path, const std::string& text) {
  try {
    auto node = YAML::Load(text);
    if (!node.IsMap()) throw UsageError(path + ": not a JSON object");
    return node;
  } catch (const YAML::Exception& e) {
    throw UsageError(path + " line " + std::to_string(e.mark.line + 1) +
                     ": invalid JSON: " + e.msg);
  }
}

// crictl writes the CRI field names (snake_case); the JSON mapping's lowerCamelCase is accepted.
YAML::Node Field(const YAML::Node& node, const std::string& snake, const std::string& camel) {
  if (!node.IsMap()) return {};
  const auto value = node[snake];
  return value.IsDefined() ? value : node[camel];
}

std::string Text(const YAML::Node& node, const std::string& path, const std::string& field) {
  if (!node.IsDefined() || node.IsNull()) return {};
  if (!node.IsScalar()) throw UsageError(path + ": " + field + " must be a string");
  return node.Scalar();
}

template <typename Map>
void ReadStringMap(const YAML::Node& node, Map& out, const std::string& path,
                   const std::string& field) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) throw UsageError(path + ": " + field + " must be an object");
  for (const auto& kv : node) out[kv.first.Scalar()] = Text(kv.second, path, field);
}

// The parts of the two documents dxshim's decision reads. (Not protobuf's JSON parser: it wants
// base64 for KeyValue.value and knows nothing of the platform sections.)
runtime::v1::CreateContainerRequest ReadRequest(const YAML::Node& container,
                                                const std::string& container_path,
                                                const YAML::Node& pod,
                                                const std::string& pod_path) {
  runtime::v1::CreateContainerRequest request;
  request.set_pod_sandbox_id("rewrite-preview");
  auto& config = *request.mutable_config();
  config.mutable_metadata()->set_name(
      Text(container["metadata"]["name"], container_path, "metadata.name"));
  const auto devices = container["devices"];
  if (devices.IsDefined() && !devices.IsNull()) {
    if (!devices.IsSequence()) throw UsageError(container_path + ": devices must be a list");
    for (const auto& d : devices) {
      auto& entry = *config.add_devices();
      entry.set_host_path(Text(Field(d, "host_path", "hostPath"), container_path, "devices"));
      entry.set_container_path(
          Text(Field(d, "container_path", "containerPath"), container_path, "devices"));
      entry.set_permissions(Text(d["permissions"], container_path, "devices"));
    }
  }
  const auto mounts = container["mounts"];
  if (mounts.IsDefined() && !mounts.IsNull()) {
    if (!mounts.IsSequence()) throw UsageError(container_path + ": mounts must be a list");
    for (const auto& m : mounts) {
      auto& entry = *config.add_mounts();
      entry.set_host_path(Text(Field(m, "host_path", "hostPath"), container_path, "mounts"));
      entry.set_container_path(
          Text(Field(m, "container_path", "containerPath"), container_path, "mounts"));
    }
  }
  const auto envs = container["envs"];
  if (envs.IsDefined() && !envs.IsNull()) {
    if (!envs.IsSequence()) throw UsageError(container_path + ": envs must be a list");
    for (const auto& e : envs) {
      auto& entry = *config.add_envs();
      entry.set_key(Text(e["key"], container_path, "envs"));
      entry.set_value(Text(e["value"], container_path, "envs"));
    }
  }
  ReadStringMap(container["labels"], *config.mutable_labels(), container_path, "labels");
  ReadStringMap(container["annotations"], *config.mutable_annotations(), container_path,
                "annotations");
  auto& sandbox = *request.mutable_sandbox_config();
  sandbox.mutable_metadata()->set_name(Text(pod["metadata"]["name"], pod_path, "metadata.name"));
  sandbox.mutable_metadata()->set_namespace_(
      Text(pod["metadata"]["namespace"], pod_path, "metadata.namespace"));
  ReadStringMap(pod["annotations"], *sandbox.mutable_annotations(), pod_path, "annotations");
  return request;
}

std::string CtrFlags(const InjectionPlan& plan) {
  std::string out;
  if (plan.replace_index) out += "--device " + plan.replacement.host_path() + "\n";
  for (const auto& d : plan.add_devices) out += "--device " + d.host_path() + "\n";
  for (const auto& m : plan.add_mounts) {
    out += "--mount type=bind,src=" + m.host_path() + ",dst=" + m.container_path() +
           ",options=rbind:ro\n";
  }
  for (const auto& e : plan.add_envs) out += "--env " + e.key() + "=" + e.value() + "\n";
  return out;
}

}  // namespace

int RunRewrite(int argc, char** argv) {
  po::options_description desc(
      "dxshim rewrite [options] CONTAINER.json POD.json\n\n"
      "Prints the container config (the JSON `crictl create` takes) as dxshim would rewrite it\n"
      "for the pod, on a node with the given inventory and configuration.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "config", po::value<std::string>(), "dxshim YAML configuration (policy, target, extras)")(
      "inventory", po::value<std::string>(),
      "inventory file (YAML or JSON); default: the configuration's device-source")(
      "target", po::value<std::string>(), "windows or linux (overrides the configuration)")(
      "explain", po::bool_switch(), "say on stderr why each device was chosen")(
      "runtime-handler", po::value<std::string>()->default_value(""),
      "the pod's runtime handler (RuntimeClass handler; empty: the runtime's default)")(
      "skip-host-file-check", po::bool_switch(),
      "do not check that runtime files exist on this host (preview another node's rewrite)")(
      "format", po::value<std::string>()->default_value("json"),
      "json (the rewritten container config) or ctr (`ctr run` flags, one per line)");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("files", 2);
  po::options_description all;
  all.add(desc).add(hidden);

  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << desc << "\n";
      return 0;
    }
    const auto files =
        vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (files.size() != 2) throw UsageError("needs CONTAINER.json and POD.json");
    const auto format = vm["format"].as<std::string>();
    if (format != "json" && format != "ctr") {
      throw UsageError("--format '" + format + "' is not json or ctr");
    }
    config::ServeConfig cfg;
    if (vm.count("config")) config::ApplyServeConfigFile(cfg, vm["config"].as<std::string>());
    if (vm.count("target")) {
      config::ApplyServeKey(cfg, "target", vm["target"].as<std::string>(), "--target");
    }
    if (vm.count("inventory")) cfg.device_source = "inventory:" + vm["inventory"].as<std::string>();

    YAML::Node document = LoadJson(files[0], ReadFile(files[0]));
    const YAML::Node pod = LoadJson(files[1], ReadFile(files[1]));
    const auto request = ReadRequest(document, files[0], pod, files[1]);

    devices::SnapshotOptions snapshot_options;
    snapshot_options.include_integrated = cfg.include_integrated;
    snapshot_options.include_detachable = cfg.include_detachable;
    snapshot_options.extra_runtime_files = cfg.extra_runtime_files;
    const devices::DeviceSnapshot snapshot(
        devices::MakeDeviceSource(cfg.device_source, cfg.sysfs_root), snapshot_options);
    Ledger ledger(cfg.policy);
    ledger.BeginResync();
    ledger.FinishResync({});  // a node where no GPU is in use yet

    TargetOptions target;
    target.target = cfg.target;
    target.linux_system32_path = cfg.linux_system32_path;
    target.linux_syswow64_path = cfg.linux_syswow64_path;
    const bool skip_check = vm["skip-host-file-check"].as<bool>();
    target.vm_runtime_handlers = cfg.vm_runtime_handlers;
    if (!skip_check) {
      target.host_file = [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::is_regular_file(path, ec) ? HostFileState::kPresent
                                                          : HostFileState::kAbsent;
      };
    }
    Decision decision;
    try {
      decision = Decide(request, *snapshot.Current(), ledger, target,
                        vm["runtime-handler"].as<std::string>());
    } catch (const DecisionError& e) {
      std::cerr << "dxshim rewrite: CreateContainer would fail with "
                << (e.code() == grpc::StatusCode::RESOURCE_EXHAUSTED ? "RESOURCE_EXHAUSTED"
                    : e.code() == grpc::StatusCode::INVALID_ARGUMENT ? "INVALID_ARGUMENT"
                                                                     : "FAILED_PRECONDITION")
                << ": " << e.what() << "\n";
      return 1;
    }
    if (!decision.pass_through && skip_check) {
      decision.plan.annotations[keys::kExplanationAnnotation] +=
          " (host files not checked: --skip-host-file-check)";
    }
    if (vm["explain"].as<bool>()) {
      std::cerr << (decision.pass_through ? "unchanged: " + decision.why : decision.why) << "\n";
      for (const auto& line : decision.reservation.considered) std::cerr << "  " << line << "\n";
      for (const auto& note : decision.plan.notes) std::cerr << "  " << note << "\n";
      if (skip_check && !decision.pass_through) {
        std::cerr << "  host files not checked (--skip-host-file-check)\n";
      }
    }
    if (format == "ctr") {
      std::cout << CtrFlags(decision.plan);
    } else {
      if (!decision.pass_through) ApplyPlanToJson(decision.plan, document);
      std::cout << EmitJson(document);
    }
  } catch (const std::exception& e) {
    std::cerr << "dxshim rewrite: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace dxshim
