#include "shim/cli/rewrite_command.h"

#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config/device_snapshot_config.h"
#include "config/serve_config.h"
#include "config/serve_config_keys.h"
#include "devices/device_source.h"
#include "shim/base/dxshim_keys.h"
#include "shim/cli/json_document.h"
#include "shim/gpu/configured_target.h"
#include "shim/gpu/container_decision.h"
#include "shim/ledger/ledger.h"
#include "shim/proxy/status_code_name.h"

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

// Calls `read` for each entry of the list `field` of `node`, if there is one.
template <typename Read>
void ReadList(const YAML::Node& node, const std::string& path, const std::string& field,
              Read read) {
  const auto list = node[field];
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) throw UsageError(path + ": " + field + " must be a list");
  for (const auto& entry : list) read(entry);
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
  const auto text = [&](const YAML::Node& node, const char* field) {
    return Text(node, container_path, field);
  };
  ReadList(container, container_path, "devices", [&](const YAML::Node& d) {
    auto& entry = *config.add_devices();
    entry.set_host_path(text(Field(d, "host_path", "hostPath"), "devices"));
    entry.set_container_path(text(Field(d, "container_path", "containerPath"), "devices"));
    entry.set_permissions(text(d["permissions"], "devices"));
  });
  ReadList(container, container_path, "mounts", [&](const YAML::Node& m) {
    auto& entry = *config.add_mounts();
    entry.set_host_path(text(Field(m, "host_path", "hostPath"), "mounts"));
    entry.set_container_path(text(Field(m, "container_path", "containerPath"), "mounts"));
  });
  ReadList(container, container_path, "envs", [&](const YAML::Node& e) {
    auto& entry = *config.add_envs();
    entry.set_key(text(e["key"], "envs"));
    entry.set_value(text(e["value"], "envs"));
  });
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

po::options_description VisibleOptions() {
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
  return desc;
}

// What the command line asks for, checked.
struct RewriteArgs {
  std::vector<std::string> files;  // CONTAINER.json, POD.json
  std::string format;
  config::ServeConfig cfg;
  bool explain = false;
  bool skip_check = false;
  std::string runtime_handler;
};

RewriteArgs ReadArgs(const po::variables_map& vm) {
  RewriteArgs args;
  if (vm.count("files")) args.files = vm["files"].as<std::vector<std::string>>();
  if (args.files.size() != 2) throw UsageError("needs CONTAINER.json and POD.json");
  args.format = vm["format"].as<std::string>();
  if (args.format != "json" && args.format != "ctr") {
    throw UsageError("--format '" + args.format + "' is not json or ctr");
  }
  auto& cfg = args.cfg;
  if (vm.count("config")) config::ApplyServeConfigFile(cfg, vm["config"].as<std::string>());
  if (vm.count("target")) {
    config::ApplyServeKey(cfg, "target", vm["target"].as<std::string>(), "--target");
  }
  if (vm.count("inventory")) cfg.device_source = "inventory:" + vm["inventory"].as<std::string>();
  args.explain = vm["explain"].as<bool>();
  args.skip_check = vm["skip-host-file-check"].as<bool>();
  args.runtime_handler = vm["runtime-handler"].as<std::string>();
  return args;
}

TargetOptions RewriteTarget(const RewriteArgs& args) {
  if (args.skip_check) return ConfiguredTarget(args.cfg);
  return ConfiguredTarget(args.cfg, [](const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) ? HostFileState::kPresent
                                                      : HostFileState::kAbsent;
  });
}

// The decision serve would take for the request, on a node where no GPU is in use yet.
Decision DecideOnFreshNode(const runtime::v1::CreateContainerRequest& request,
                           const RewriteArgs& args) {
  const auto& cfg = args.cfg;
  const devices::DeviceSnapshot snapshot(config::DeviceSourceOf(cfg),
                                         config::SnapshotOptionsOf(cfg));
  const auto nothing_held = [] {
    LedgerView view;
    view.synced = true;
    return view;
  };
  return Decide(request, *snapshot.Current(), cfg.policy, nothing_held, RewriteTarget(args),
                args.runtime_handler);
}

void Explain(const Decision& decision, bool skip_check) {
  std::cerr << (decision.pass_through ? "unchanged: " + decision.why : decision.why) << "\n";
  for (const auto& line : decision.placed.considered) std::cerr << "  " << line << "\n";
  for (const auto& note : decision.plan.notes) std::cerr << "  " << note << "\n";
  if (skip_check && !decision.pass_through) {
    std::cerr << "  host files not checked (--skip-host-file-check)\n";
  }
}

}  // namespace

int RunRewrite(int argc, char** argv) {
  const auto desc = VisibleOptions();
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
    const auto args = ReadArgs(vm);
    YAML::Node document = LoadJson(args.files[0], ReadFile(args.files[0]));
    const YAML::Node pod = LoadJson(args.files[1], ReadFile(args.files[1]));
    const auto request = ReadRequest(document, args.files[0], pod, args.files[1]);
    Decision decision;
    try {
      decision = DecideOnFreshNode(request, args);
    } catch (const DecisionError& e) {
      std::cerr << "dxshim rewrite: CreateContainer would fail with " << StatusCodeName(e.code())
                << ": " << e.what() << "\n";
      return 1;
    }
    if (!decision.pass_through && args.skip_check) {
      decision.plan.annotations[keys::kExplanationAnnotation] +=
          " (host files not checked: --skip-host-file-check)";
    }
    if (args.explain) Explain(decision, args.skip_check);
    if (args.format == "ctr") {
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
