// Runtime files on the host (shim/gpu/host_files.h), with real files in a temporary folder:
// present, absent (never seen) and gone (seen, then moved away as a driver update moves its
// DriverStore folder).
#include "shim/gpu/host_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace dxshim {
namespace {

TEST(HostFiles, TellsAbsentFromGone) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "store-1");
  std::ofstream(dir / "store-1/libgpu.so") << "1";
  devices::Device d;
  d.driver_store = dir / "store-1";
  d.system32 = {{"libgpu.so", "libgpu.so"}, {"libnever.so", "libnever.so"}};
  HostFiles files(config::Target::kLinux);
  files.Observe({d});
  const auto shipped = dir / "store-1/libgpu.so";
  const auto never = dir / "store-1/libnever.so";
  EXPECT_EQ(files.Check(shipped), HostFileState::kPresent);
  EXPECT_EQ(files.Check(never), HostFileState::kAbsent);
  // A directory where the file was (what containerd would have made) is not the file.
  std::filesystem::rename(dir / "store-1", dir / "store-2");
  EXPECT_EQ(files.Check(shipped), HostFileState::kGone);
  std::filesystem::create_directories(shipped);
  EXPECT_EQ(files.Check(shipped), HostFileState::kGone);
  EXPECT_EQ(files.Check(never), HostFileState::kAbsent);
  // A file first seen at a check counts as seen too.
  std::ofstream(dir / "store-2/libnever.so") << "late";
  EXPECT_EQ(files.Check(dir / "store-2/libnever.so"), HostFileState::kPresent);
  std::filesystem::remove(dir / "store-2/libnever.so");
  EXPECT_EQ(files.Check(dir / "store-2/libnever.so"), HostFileState::kGone);
}

TEST(HostFiles, ObservesWhatEachReadOfTheSourceNames) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "store");
  std::ofstream(dir / "store/a.so") << "a";
  devices::Device d;
  d.driver_store = dir / "store/";  // a trailing separator is not doubled
  d.syswow64 = {{"a.so", "a.so"}};
  HostFiles files(config::Target::kLinux);
  files.Observe({d});
  std::filesystem::remove(dir / "store/a.so");
  // Never checked before, but seen when the snapshot was read: gone, not absent.
  EXPECT_EQ(files.Check(dir / "store/a.so"), HostFileState::kGone);
}

}  // namespace
}  // namespace dxshim
