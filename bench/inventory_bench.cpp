// Device-side costs that must stay off the CreateContainer path: loading a 64-device inventory
// (what a refresh of the snapshot costs) and parsing registry runtime-file values (what Windows
// discovery does per value). Printed per operation and relative to a plain copy of the same
// bytes measured in the same run.
//
// usage: inventory_bench [--rounds N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "devices/inventory_file.h"
#include "devices/runtime_files.h"

namespace {

using namespace dxshim::devices;
using Clock = std::chrono::steady_clock;

template <typename F>
double MedianMicros(int rounds, F&& f) {
  std::vector<double> samples;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    f();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::vector<Device> SixtyFourDevices() {
  const auto t4 =
      LoadInventoryFile(DXSHIM_SOURCE_DIR "/deploy/examples/inventories/nvidia-t4.yaml");
  std::vector<Device> out;
  for (int i = 0; i < 64; ++i) {
    Device d = t4.at(0);
    d.id += "-" + std::to_string(i);
    d.location_path = "PCIROOT(0)#PCI(" + std::to_string(1000 + i) + ")";
    d.luid += static_cast<std::uint64_t>(i);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::stoi(argv[i + 1]);
  }
  const auto devices = SixtyFourDevices();
  const auto yaml = WriteInventoryYaml(devices);
  const auto json = WriteInventoryJson(devices);
  std::size_t sink = 0;

  const double copy = MedianMicros(rounds, [&] { sink += std::string(yaml).size(); });
  const double load_yaml =
      MedianMicros(rounds, [&] { sink += ParseInventory(yaml, "bench").size(); });
  const double load_json =
      MedianMicros(rounds, [&] { sink += ParseInventory(json, "bench").size(); });
  std::printf("64-device inventory: %zu bytes YAML, %zu bytes JSON\n", yaml.size(), json.size());
  std::printf("load YAML  median %9.1f us  (%.0fx a copy of the text)\n", load_yaml,
              load_yaml / copy);
  std::printf("load JSON  median %9.1f us  (%.0fx a copy of the text)\n", load_json,
              load_json / copy);

  const std::string value("nvcuda_loader64.dll\0nvcuda.dll\0\0", 32);
  constexpr int kValues = 10000;
  const double parse = MedianMicros(std::max(rounds / 10, 5), [&] {
    for (int i = 0; i < kValues; ++i) sink += ParseCopyToVmValue(SplitMultiSz(value)).source.size();
  });
  std::printf("registry value split+parse+check: %.3f us per value\n", parse / kValues);
  return sink == 0 ? 1 : 0;
}
