#include "devices/windows/nvidia_query.h"

#include <windows.h>

#include <cstdio>
#include <exception>

#include "devices/windows/child_run.h"
#include "devices/windows/cuda_uuids.h"
#include "devices/windows/nvml_uuids.h"

namespace dxshim::devices::windows {
namespace {

constexpr std::size_t kAnswerLimit = 1 << 20;

// What the child printed, or "" with `error` saying why there is nothing to read.
std::string Answer(const NvidiaQuery& query, const std::vector<std::string>& args,
                   std::string& error) {
  std::string command = "the child `";
  for (std::size_t i = 0; i < args.size(); ++i) command += (i > 0 ? " " : "") + args[i];
  command += "`";
  const auto program = query.program.empty() ? ThisProgramPath() : query.program;
  const auto run = RunChild(program, args, query.deadline, kAnswerLimit);
  if (!run.finished) {
    error = command + " " + run.failure;
  } else if (run.exit_code != 0) {
    error = command + " " + DescribeExit(run.exit_code);
  } else if (run.out_cut) {
    error = command + " answered more than " + std::to_string(kAnswerLimit) + " bytes";
  } else {
    return run.out;
  }
  return "";
}

// The child's report, or one whose error says, after `nothing`, why the child gave none.
template <typename Report, typename Read>
Report Ask(const NvidiaQuery& query, const std::vector<std::string>& args, const char* nothing,
           Read read) {
  std::string error;
  const auto out = Answer(query, args, error);
  if (error.empty()) {
    try {
      return read(out);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  Report report;
  report.error = nothing + error;
  report.child_failed = true;
  return report;
}

bool IsBusId(const std::string& text) {
  if (text.empty() || text.size() > 32) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.')) return false;
  }
  return true;
}

}  // namespace

CudaReport AskCuda(const NvidiaQuery& query) {
  return Ask<CudaReport>(query, {"nvidia-uuids", "cuda"}, "no CUDA: ", ReadCudaReport);
}

NvmlReport AskNvml(const NvidiaQuery& query, const std::vector<std::string>& bus_ids) {
  std::vector<std::string> args = {"nvidia-uuids", "nvml"};
  args.insert(args.end(), bus_ids.begin(), bus_ids.end());
  return Ask<NvmlReport>(query, args, "no NVIDIA UUIDs: ", ReadNvmlReport);
}

int RunNvidiaUuidsCommand(const std::vector<std::string>& args) {
  // A driver library that crashes ends this child at once: no error box, no debugger, no
  // Windows Error Reporting wait; discovery reads the exception code as the reason.
  SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
  // The answer goes to the output handle as it was; whatever a driver library prints on stdout
  // goes to NUL instead, so that it cannot garble the JSON.
  HANDLE answer = nullptr;
  if (!DuplicateHandle(GetCurrentProcess(), GetStdHandle(STD_OUTPUT_HANDLE), GetCurrentProcess(),
                       &answer, 0, FALSE, DUPLICATE_SAME_ACCESS)) {
    std::fputs("nvidia-uuids: no standard output to answer on\n", stderr);
    return 1;
  }
  std::fflush(stdout);
  if (!std::freopen("NUL", "w", stdout)) {
    CloseHandle(answer);
    std::fputs("nvidia-uuids: cannot put NUL in place of stdout\n", stderr);
    return 1;
  }
  SetStdHandle(STD_OUTPUT_HANDLE, GetStdHandle(STD_ERROR_HANDLE));
  std::string json;
  if (args.size() == 1 && args[0] == "cuda") {
    json = WriteCudaReport(ReadCudaHere());
  } else if (!args.empty() && args[0] == "nvml") {
    const std::vector<std::string> bus_ids(args.begin() + 1, args.end());
    for (const auto& id : bus_ids) {
      if (!IsBusId(id)) {
        std::fprintf(stderr, "nvidia-uuids: '%s' is not a PCI bus id\n", id.c_str());
        return 2;
      }
    }
    json = WriteNvmlReport(ReadNvmlHere(bus_ids));
  } else {
    CloseHandle(answer);
    std::fputs("usage: nvidia-uuids cuda | nvidia-uuids nvml BUSID...\n", stderr);
    return 2;
  }
  DWORD written = 0;
  const bool sent =
      WriteFile(answer, json.data(), static_cast<DWORD>(json.size()), &written, nullptr) &&
      written == json.size();
  CloseHandle(answer);
  return sent ? 0 : 1;
}

}  // namespace dxshim::devices::windows
