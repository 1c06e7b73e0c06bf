#include "tests/support/wine_dxshim.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/loopback_impostor.h"
#include "tests/support/read_file.h"

namespace dxshim::test {
namespace {

// The number after the first `marker` in `text`, or 0.
int NumberAfter(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + marker.size());
}

}  // namespace

std::string WindowsPath(const std::string& host_path) {
  std::string out = "Z:" + host_path;
  for (auto& c : out) c = c == '/' ? '\\' : c;
  return out;
}

std::string WineBinary() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin"}) {
    std::string candidate = std::string(dir) + "/wine64";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "/usr/lib/wine/wine64";
}

WineDxshim::WineDxshim(const std::string& exe, const std::string& relay_exe,
                       const std::string& runtime, const std::vector<std::string>& flags,
                       const std::string& pipe)
    : pipe_(pipe.empty() ? "dxshim-" + std::to_string(::getpid()) : pipe) {
  if (!std::filesystem::exists(exe)) {
    throw std::runtime_error(exe + " is missing: build it with scripts/build-windows.sh");
  }
  std::vector<std::string> args = {
      exe,         "serve", "--listen",   "npipe://./pipe/" + pipe_,
      "--runtime", runtime, "--log-file", WindowsPath(dir_ / "dxshim.log")};
  args.insert(args.end(), flags.begin(), flags.end());
  // The private prefix made ready first (tests/support/wine_prefix.sh), then dxshim.exe, then the
  // relay.
  std::filesystem::create_directory(dir_ / "tmp");
  Process prefix(InPrefix(DXSHIM_SOURCE_DIR "/tests/support/wine_prefix.sh", {dir_ / "prefix"}),
                 dir_ / "prefix.log");
  if (prefix.Wait(std::chrono::seconds(600)) != 0) {
    throw std::runtime_error("no Wine prefix for dxshim.exe:\n" + prefix.Log());
  }
  dxshim_ = std::make_unique<Process>(InPrefix(WineBinary(), args), dir_ / "dxshim.out");
  const auto listening = [&] { return Log().find("listening on npipe://") != std::string::npos; };
  if (!WaitFor([&] { return listening() || !dxshim_->running(); }, std::chrono::seconds(120)) ||
      !listening()) {
    throw std::runtime_error("dxshim.exe did not serve its pipe:\n" + dxshim_->Log() + Log());
  }
  // The relay only forwards (backend port 0): loopback TCP to the pipe dxshim.exe serves.
  relay_ = std::make_unique<Process>(
      InPrefix(WineBinary(), {relay_exe, pipe_, "0", dir_ / "stop-relay"}), dir_ / "relay.log");
  WaitFor([&] { return NumberAfter(relay_->Log(), "forwarder-port ") != 0 || !relay_->running(); },
          std::chrono::seconds(120));
  forwarder_port_ = NumberAfter(relay_->Log(), "forwarder-port ");
  if (forwarder_port_ == 0) {
    throw std::runtime_error("the pipe forwarder did not start:\n" + relay_->Log() + Log());
  }
}

WineDxshim::~WineDxshim() {
  if (relay_) {
    std::ofstream(dir_ / "stop-relay") << "stop\n";
    relay_->Wait(std::chrono::seconds(30));
  }
  relay_.reset();
  dxshim_.reset();  // SIGKILL if a test left it running
  const auto wineserver = std::filesystem::path(WineBinary()).parent_path() / "wineserver";
  Process end(InPrefix(wineserver, {"-k"}), dir_ / "wineserver.log");
  end.Wait(std::chrono::seconds(30));
}

std::vector<std::uint16_t> WineDxshim::ListeningPorts() const {
  // Listed twice, a moment apart, and kept when in both: a socket pair's listener lives only while
  // a bridge connects to itself (shim/socket_bridge/socket_pair.h), and one may be caught.
  const auto listed = [&] {
    auto ports = ListeningTcpPorts(ProcessesWithEnvironment("WINEPREFIX=" + dir_ / "prefix"));
    std::erase(ports, static_cast<std::uint16_t>(forwarder_port_));
    return ports;
  };
  const auto first = listed();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto second = listed();
  std::vector<std::uint16_t> both;
  std::set_intersection(first.begin(), first.end(), second.begin(), second.end(),
                        std::back_inserter(both));
  return both;
}

std::vector<std::string> WineDxshim::InPrefix(const std::string& program,
                                              const std::vector<std::string>& args) const {
  // TMPDIR in the test's folder: wine makes its server folder (wine-XXXXXX) there, removed with it.
  std::vector<std::string> argv = {
      "/usr/bin/env",   "WINEPREFIX=" + dir_ / "prefix",    "TMPDIR=" + dir_ / "tmp",
      "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=", program};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string WineDxshim::Log() const {
  // The log file, then what the process wrote to its console (wine's own messages, a crash).
  return ReadFile(dir_ / "dxshim.log") + "--- console:\n" + (dxshim_ ? dxshim_->Log() : "");
}

long WineDxshim::RssKiB() const {
  // Wine runs the program in the process it was started as (the launcher execs its loader).
  const std::string status = ReadFile("/proc/" + std::to_string(dxshim_->pid()) + "/status");
  return NumberAfter(status, "VmRSS:");
}

void WineDxshim::Kill() { dxshim_->Signal(SIGKILL); }

int WineDxshim::Run(const std::vector<std::string>& command, const std::string& name,
                    std::string* out, std::string* err) {
  const auto out_path = dir_ / (name + ".out");
  const auto err_path = dir_ / (name + ".err");
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  // Its standard error apart, so that what it prints is read alone.
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>>" + err_path};
  const auto in_prefix = InPrefix(WineBinary(), command);
  argv.insert(argv.end(), in_prefix.begin(), in_prefix.end());
  Process p(argv, out_path);
  const auto code = p.Wait(std::chrono::seconds(120));
  if (out) *out = p.Log();
  if (err) *err = ReadFile(err_path);
  return code.value_or(-1);
}

std::optional<int> WineDxshim::Stop(std::chrono::milliseconds timeout) {
  dxshim_->Signal(SIGINT);
  return dxshim_->Wait(timeout);
}

}  // namespace dxshim::test
