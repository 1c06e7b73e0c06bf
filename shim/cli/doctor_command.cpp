#include "shim/cli/doctor_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>

#include "config/serve_config.h"
#include "config/serve_config_keys.h"
#include "shim/base/json_text.h"
#include "shim/cli/logging.h"
#include "shim/cli/platform.h"
#include "shim/cli/serve_command_line.h"
#include "shim/doctor/doctor.h"
#include "shim/doctor/windows_exporter_check.h"

namespace dxshim {
namespace {

namespace po = boost::program_options;
using doctor::Checks;
using doctor::Status;

po::options_description Options() {
  auto desc = ServeFlags(
      "dxshim doctor [options]\n\nChecks this node's GPU path with the configuration serve "
      "reads (--config, else the installed " +
      InstalledConfigPath() + " when it exists) and says what to fix");
  const std::string windows_exporter_help =
      std::string(
          "HOST:PORT of windows_exporter, whose gpu collector the monitoring join needs "
          "(on Windows nodes ") +
      doctor::kWindowsExporterAddress + " unless given; none: not checked)";
  desc.add_options()("output,o", po::value<std::string>()->default_value("table"),
                     "table or json ([{check, status, detail, fix}])")(
      "timeout", po::value<std::string>()->default_value("3s"),
      "how long each call (CRI, the plugin's list, /readyz, windows_exporter's /metrics) may "
      "take")("windows-exporter", po::value<std::string>(), windows_exporter_help.c_str());
  return desc;
}

// --output's value, read before the options are parsed: a script that asked for JSON gets JSON
// even when the rest of its command line is wrong (once it parses, the parser's value counts).
std::string OutputAsked(int argc, char** argv) {
  std::string output = "table";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--output" || arg == "-o") && i + 1 < argc) output = argv[i + 1];
    if (arg.starts_with("--output=")) output = arg.substr(9);
  }
  return output;
}

const char* Mark(Status status) {
  switch (status) {
    case Status::kOk:
      return "\u2713";  // ✓
    case Status::kWarning:
      return "!";
    case Status::kFailed:
      return "\u2717";  // ✗
  }
  return "?";
}

// A line as printed: what came from the node (a kubelet's endpoint, a file name) cannot start a
// line of its own or move the cursor.
std::string Printable(const std::string& text) {
  std::string out;
  for (const char c : text) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return out;
}

void PrintTable(const Checks& checks, std::chrono::milliseconds took) {
  const Utf8Console console;
  std::size_t width = 0;
  for (const auto& c : checks) width = std::max(width, c.check.size());
  std::size_t failed = 0;
  std::size_t warnings = 0;
  for (const auto& c : checks) {
    std::cout << Mark(c.status) << " " << c.check << std::string(width - c.check.size() + 2, ' ')
              << Printable(c.detail) << "\n";
    if (c.status != Status::kOk) {
      std::cout << "  " << std::string(width + 2, ' ') << "fix: " << Printable(c.fix) << "\n";
    }
    failed += c.status == Status::kFailed ? 1 : 0;
    warnings += c.status == Status::kWarning ? 1 : 0;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", static_cast<double>(took.count()) / 1000.0);
  std::cout << checks.size() << " checks: " << failed << " failed, " << warnings
            << " warning(s), in " << seconds << " s" << std::endl;
}

void PrintJson(const Checks& checks) {
  std::cout << "[";
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    std::cout << (i == 0 ? "\n" : ",\n") << "  {\"check\": " << JsonString(c.check)
              << ", \"status\": " << JsonString(doctor::StatusWord(c.status))
              << ", \"detail\": " << JsonString(c.detail) << ", \"fix\": " << JsonString(c.fix)
              << "}";
  }
  std::cout << "\n]" << std::endl;
}

// Check 1: serve's configuration as serve reads it. False when it is not valid.
bool ReadConfiguration(int argc, char** argv, const po::options_description& desc,
                       config::ServeConfig& cfg, std::chrono::milliseconds& timeout,
                       std::string& output, std::optional<std::string>& windows_exporter,
                       Checks& checks, bool& help) {
  try {
    po::variables_map vm;
    if (!ReadServeOptions(argc, argv, desc, config::ServeKeys(), cfg, vm, InstalledConfigPath())) {
      help = true;
      return true;
    }
    std::error_code ec;
    const std::string source = vm.count("config") ? vm["config"].as<std::string>()
                               : std::filesystem::exists(InstalledConfigPath(), ec)
                                   ? InstalledConfigPath()
                                   : std::string("the defaults");
    std::string flags;
    for (const auto& key : config::ServeKeys()) {
      if (vm.count(key)) flags += " --" + key;
    }
    ParseEndpoint(cfg.listen);
    ParseEndpoint(cfg.runtime);
    // At most 10 minutes: every wait is counted in milliseconds of an int.
    timeout = std::min<std::chrono::milliseconds>(
        config::ParseDuration(vm["timeout"].as<std::string>()), std::chrono::minutes(10));
    output = vm["output"].as<std::string>();  // as the parser read it (-ojson, --out json)
    if (vm.count("windows-exporter")) windows_exporter = vm["windows-exporter"].as<std::string>();
    checks.push_back(doctor::Ok("configuration", source + (flags.empty() ? "" : " and" + flags) +
                                                     ": valid (listen " + cfg.listen +
                                                     ", runtime " + cfg.runtime + ", target " +
                                                     config::ToString(cfg.target) + ")"));
    return true;
  } catch (const std::exception& e) {
    checks.push_back(doctor::Failed("configuration", e.what(),
                                    "correct it (dxshim serve --check says the same); "
                                    "docs/configuration.md lists every key"));
    return false;
  }
}

}  // namespace

int RunDoctor(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  const auto known_output = [](const std::string& output) {
    if (output == "table" || output == "json") return true;
    std::cerr << "dxshim doctor: --output " << output << ": expected table or json\n";
    return false;
  };
  std::string output = OutputAsked(argc, argv);
  if (!known_output(output)) return 2;
  config::ServeConfig cfg;
  Checks checks;
  bool help = false;
  std::chrono::milliseconds timeout{3000};
  std::optional<std::string> windows_exporter;
  const bool valid = ReadConfiguration(argc, argv, Options(), cfg, timeout, output,
                                       windows_exporter, checks, help);
  if (help) return 0;
  if (!known_output(output)) return 2;
  // Only problems go to stderr; stdout is the report.
  InitLogging("error");
  if (!Elevated()) {
    checks.push_back(
        doctor::Warning("privileges",
                        "not run elevated: other users' processes, kubelet's files and dxshim's "
                        "endpoints may be out of reach, and their lines wrong",
                        "run doctor from an elevated prompt (Windows) or as root (Linux)"));
  }
  if (valid) {
    doctor::DoctorSetup setup;
    setup.cfg = cfg;
    setup.windows_node = WindowsNode();
    // windows_exporter runs on Windows nodes only: elsewhere it is checked only when named.
    setup.windows_exporter = windows_exporter.value_or(
        setup.windows_node ? std::string(doctor::kWindowsExporterAddress) : std::string());
    if (setup.windows_exporter == "none") setup.windows_exporter.clear();
    // Named as an operator writes them (unix:///path even where the file says /path).
    setup.listen.dial = ParseEndpoint(cfg.listen);
    setup.listen.name = setup.listen.dial.ToString();
    setup.runtime.dial = ParseEndpoint(cfg.runtime);
    setup.runtime.name = setup.runtime.dial.ToString();
    setup.listen.timeout = setup.runtime.timeout = timeout;
    try {
      // Named pipes are dialed through loopback bridges only this process may use.
      const auto listen_pipe = PipeBridges::ForDialing(setup.listen.dial);
      const auto runtime_pipe = PipeBridges::ForDialing(setup.runtime.dial);
      doctor::RunChecks(setup, checks);
      listen_pipe->Stop();
      runtime_pipe->Stop();
    } catch (const std::exception& e) {
      checks.push_back(doctor::Failed("dxshim", std::string("cannot reach the pipes: ") + e.what(),
                                      "run doctor elevated (Administrator)"));
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (output == "json") {
    PrintJson(checks);
  } else {
    PrintTable(checks, took);
  }
  return doctor::ExitCode(checks);
}

}  // namespace dxshim
