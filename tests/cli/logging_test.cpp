// The log (shim/cli/logging.h): a log file is rotated at its size keeping its count of older
// files, and a file that cannot be opened is named in the error.
#include "shim/cli/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/read_file.h"

namespace dxshim {
namespace {

namespace fs = std::filesystem;

TEST(Logging, AFileIsRotatedAtItsSizeKeepingItsCount) {
  const auto dir = fs::temp_directory_path() / ("dxshim-log-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto file = dir / "logs" / "dxshim.log";  // the directory is created
  InitLogging("info", LogDestination{file.string(), 64u << 10, 2});
  const std::string filler(100, 'x');
  for (int i = 0; i < 3000; ++i) spdlog::info("line {} {}", i, filler);  // ~400 KiB
  spdlog::debug("below the level");
  spdlog::default_logger()->flush();

  EXPECT_TRUE(fs::exists(dir / "logs" / "dxshim.log"));
  EXPECT_TRUE(fs::exists(dir / "logs" / "dxshim.1.log"));
  EXPECT_TRUE(fs::exists(dir / "logs" / "dxshim.2.log"));
  EXPECT_FALSE(fs::exists(dir / "logs" / "dxshim.3.log"));
  for (const char* name : {"dxshim.log", "dxshim.1.log", "dxshim.2.log"}) {
    EXPECT_LE(fs::file_size(dir / "logs" / name), 64u << 10) << name;
  }
  const auto newest = test::ReadFile(dir / "logs" / "dxshim.log");
  EXPECT_NE(newest.find("line 2999 "), std::string::npos);
  EXPECT_NE(newest.find(" info line "), std::string::npos);
  EXPECT_EQ(newest.find("below the level"), std::string::npos);
  EXPECT_EQ(test::ReadFile(dir / "logs" / "dxshim.2.log").find("line 2999 "), std::string::npos);

  InitLogging("info");  // back to stderr for the other tests
  fs::remove_all(dir);
}

TEST(Logging, AFileThatCannotBeOpenedIsNamed) {
  try {
    InitLogging("info", LogDestination{"/proc/dxshim-no/such.log", 1u << 20, 1});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("log file /proc/dxshim-no/such.log"), std::string::npos)
        << e.what();
  }
  InitLogging("info");
}

}  // namespace
}  // namespace dxshim
