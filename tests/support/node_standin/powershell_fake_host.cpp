// The unit test's in-memory Host.
#include "tests/support/node_standin/powershell_fake_host.h"

#include "tests/support/node_standin/powershell_text.h"

namespace dxshim::test::node_standin::powershell {

namespace {

std::string FileNameOf(const std::string& path) {
  const auto slash = path.find_last_of("\\/");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         EqualsNoCase(text.substr(text.size() - suffix.size()), suffix);
}

// The program of a command line: its first word, without quotes.
std::string ProgramOf(const std::string& line) {
  if (!line.empty() && line[0] == '"') return line.substr(1, line.find('"', 1) - 1);
  return line.substr(0, line.find(' '));
}

}  // namespace

FakeHost::FakeHost() {
  environment["SYSTEMDRIVE"] = "C:";
  environment["PATH"] = "C:\\Windows\\System32;C:\\Program Files\\containerd";
  environment["PATHEXT"] = ".COM;.EXE;.BAT;.CMD";
  directories.insert("C:\\");
  directories.insert("C:\\k");
  directories.insert("C:\\Windows");
  directories.insert("C:\\Windows\\System32");
}

std::string FakeHost::FullPath(const std::string& path) {
  std::string p = path;
  for (auto& c : p) c = c == '/' ? '\\' : c;
  if (p.size() >= 2 && p[1] == ':') {
    if (p.size() == 2) return p + "\\";
  } else if (!p.empty() && p[0] == '\\') {
    p = "C:" + p;
  } else {
    p = current_directory + "\\" + p;
  }
  std::string full;
  for (std::size_t i = 0; i < p.size(); ++i) {  // "\.\" and doubled separators
    if (p[i] == '\\' && !full.empty() && full.back() == '\\') continue;
    if (p.compare(i, 3, "\\.\\") == 0) {
      ++i;
      continue;
    }
    full += p[i];
  }
  if (full.size() > 3 && full.back() == '\\') full.pop_back();
  return full;
}

std::optional<std::string> FakeHost::ReadFile(const std::string& path) {
  const auto it = files.find(FullPath(path));
  if (it == files.end()) return std::nullopt;
  return it->second;
}

bool FakeHost::WriteFile(const std::string& path, const std::string& bytes, bool append,
                         std::string& error) {
  const std::string full = FullPath(path);
  const auto slash = full.find_last_of('\\');
  if (!directories.count(full.substr(0, slash == 2 ? 3 : slash))) {
    error = "Could not find a part of the path '" + full + "'.";
    return false;
  }
  if (append) {
    files[full] += bytes;
  } else {
    files[full] = bytes;
  }
  return true;
}

PathKind FakeHost::KindOf(const std::string& path) {
  const std::string full = FullPath(path);
  if (files.count(full)) return PathKind::kFile;
  if (directories.count(full)) return PathKind::kDirectory;
  return PathKind::kNone;
}

bool FakeHost::MakeDirectory(const std::string& path, std::string& error) {
  std::string full = FullPath(path);
  if (files.count(full)) {
    error = "a file is in the way";
    return false;
  }
  for (std::size_t at = full.find('\\', 3); at != std::string::npos; at = full.find('\\', at + 1)) {
    directories.insert(full.substr(0, at));
  }
  directories.insert(full);
  return true;
}

bool FakeHost::RemovePath(const std::string& path, bool, std::string& error) {
  const std::string full = FullPath(path);
  if (files.erase(full) || directories.erase(full)) return true;
  error = "not found";
  return false;
}

bool FakeHost::CopyPath(const std::string& from, const std::string& to, std::string& error) {
  const auto bytes = ReadFile(from);
  if (!bytes) {
    error = "Could not find file '" + FullPath(from) + "'.";
    return false;
  }
  return WriteFile(to, *bytes, false, error);
}

bool FakeHost::MovePath(const std::string& from, const std::string& to, std::string& error) {
  if (!CopyPath(from, to, error)) return false;
  files.erase(FullPath(from));
  return true;
}

std::vector<std::string> FakeHost::ListDirectory(const std::string& path) {
  const std::string prefix = FullPath(path) + "\\";
  std::set<std::string, NoCaseLess> names;
  const auto add = [&](const std::string& full) {
    if (full.size() > prefix.size() && EqualsNoCase(full.substr(0, prefix.size()), prefix) &&
        full.find('\\', prefix.size()) == std::string::npos) {
      names.insert(full.substr(prefix.size()));
    }
  };
  for (const auto& [full, bytes] : files) add(full);
  for (const auto& full : directories) add(full);
  return {names.begin(), names.end()};
}

std::optional<std::string> FakeHost::FileSha256(const std::string& path) {
  const auto bytes = ReadFile(path);
  if (!bytes) return std::nullopt;
  return std::to_string(bytes->size()) + "-" + std::to_string(std::hash<std::string>{}(*bytes));
}

std::optional<std::string> FakeHost::OwnerSid(const std::string& path) {
  if (KindOf(path) == PathKind::kNone) return std::nullopt;
  return "S-1-5-32-544";
}

std::optional<std::string> FakeHost::GetEnvironment(const std::string& name) {
  const auto it = environment.find(name);
  if (it == environment.end()) return std::nullopt;
  return it->second;
}

void FakeHost::SetEnvironment(const std::string& name, const std::optional<std::string>& value) {
  if (value) {
    environment[name] = *value;
  } else {
    environment.erase(name);
  }
}

std::optional<std::string> FakeHost::FindProgram(const std::string& name) {
  std::vector<std::string> extensions = {""};
  const std::string pathext = environment["PATHEXT"];
  for (std::size_t i = 0; i <= pathext.size();) {
    const auto semicolon = pathext.find(';', i);
    const auto end = semicolon == std::string::npos ? pathext.size() : semicolon;
    if (end > i) extensions.push_back(pathext.substr(i, end - i));
    i = end + 1;
  }
  extensions.push_back(".ps1");
  std::vector<std::string> folders;
  if (name.find_first_of("\\/:") != std::string::npos) {
    folders.push_back("");
  } else {
    const std::string path = environment["PATH"];
    for (std::size_t i = 0; i <= path.size();) {
      const auto semicolon = path.find(';', i);
      const auto end = semicolon == std::string::npos ? path.size() : semicolon;
      if (end > i) folders.push_back(path.substr(i, end - i) + "\\");
      i = end + 1;
    }
  }
  for (const auto& folder : folders) {
    for (const auto& extension : extensions) {
      if (!extension.empty() && EndsWith(name, extension)) continue;
      const std::string candidate = FullPath(folder + name + extension);
      const auto found = files.find(candidate);
      if (found != files.end()) return folder.empty() ? name + extension : found->first;
    }
  }
  return std::nullopt;
}

ProgramRun FakeHost::Run(const std::string& command_line, const std::string& directory,
                         bool capture, bool above_normal) {
  runs.push_back({command_line, directory, capture, above_normal});
  const std::string program = ProgramOf(command_line);
  ProgramRun run;
  if (!files.count(FullPath(program))) {
    run.error = 2;  // ERROR_FILE_NOT_FOUND
    return run;
  }
  run.started = true;
  const std::string name = LowerAscii(FileNameOf(program));
  if (on_run) on_run(name, command_line);
  if (capture) run.output = program_output[name];
  run.exit_code = program_exit[name];
  return run;
}

ServiceInfo FakeHost::QueryService(const std::string& name) {
  ServiceInfo info;
  const auto it = services.find(name);
  if (it == services.end()) return info;
  info.exists = true;
  info.name = it->first;
  info.display_name = it->first;
  info.status = it->second.status;
  info.can_stop = info.status == "Running";
  return info;
}

std::vector<std::string> FakeHost::DependentServices(const std::string& name) {
  std::vector<std::string> dependents;
  for (const auto& [service, data] : services) {
    for (const auto& dependency : data.depends_on) {
      if (EqualsNoCase(dependency, name)) dependents.push_back(service);
    }
  }
  return dependents;
}

std::uint32_t FakeHost::StartNamedService(const std::string& name) {
  const auto it = services.find(name);
  if (it == services.end()) return 1060;                  // ERROR_SERVICE_DOES_NOT_EXIST
  if (it->second.status == "Running") return 1056;        // ERROR_SERVICE_ALREADY_RUNNING
  for (const auto& dependency : it->second.depends_on) {  // as Windows' SCM does
    const std::uint32_t error = StartNamedService(dependency);
    if (error != 0 && error != 1056) return 1068;  // ERROR_SERVICE_DEPENDENCY_FAIL
  }
  it->second.status = "Running";
  service_calls.push_back("start " + it->first);
  return 0;
}

std::uint32_t FakeHost::StopNamedService(const std::string& name) {
  const auto it = services.find(name);
  if (it == services.end()) return 1060;
  if (it->second.status != "Running") return 1062;  // ERROR_SERVICE_NOT_ACTIVE
  for (const auto& dependent : DependentServices(name)) {
    if (services[dependent].status != "Stopped") return 1051;  // dependents running
  }
  it->second.status = "Stopped";
  service_calls.push_back("stop " + it->first);
  return 0;
}

std::string FakeHost::Text(const std::string& path) {
  const auto bytes = ReadFile(path);
  return bytes ? DecodeText(*bytes) : "";
}

}  // namespace dxshim::test::node_standin::powershell
