// Runtime file lists (devices/runtime_files.h) as the registry and inventory files give them:
// REG_MULTI_SZ splitting, path safety with the reason for each refusal, destinations that are
// file names, and merging by destination.
#include "devices/runtime_files.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dxshim::devices {
namespace {

TEST(RuntimeFiles, SplitsMultiSz) {
  using namespace std::string_literals;
  EXPECT_EQ(SplitMultiSz("a.dll\0b.dll\0\0"s), (std::vector<std::string>{"a.dll", "b.dll"}));
  EXPECT_EQ(SplitMultiSz("only.dll\0\0"s), std::vector<std::string>{"only.dll"});
  EXPECT_EQ(SplitMultiSz("unterminated.dll"s), std::vector<std::string>{"unterminated.dll"});
  EXPECT_TRUE(SplitMultiSz(""s).empty());
  EXPECT_TRUE(SplitMultiSz("\0"s).empty());
  // Whatever follows the empty string that ends the list is not part of it.
  EXPECT_EQ(SplitMultiSz("a\0\0junk\0\0"s), std::vector<std::string>{"a"});
}

TEST(RuntimeFiles, OneOrTwoStrings) {
  EXPECT_EQ(ParseCopyToVmValue({"nvapi64.dll"}), (RuntimeFile{"nvapi64.dll", "nvapi64.dll"}));
  EXPECT_EQ(ParseCopyToVmValue({"nvcuda_loader64.dll", "nvcuda.dll"}),
            (RuntimeFile{"nvcuda_loader64.dll", "nvcuda.dll"}));
  // A source in a subfolder lands under its own file name.
  EXPECT_EQ(ParseCopyToVmValue({"B390143\\amdxc64.dll"}),
            (RuntimeFile{"B390143\\amdxc64.dll", "amdxc64.dll"}));
  EXPECT_THROW(ParseCopyToVmValue({}), std::invalid_argument);
  EXPECT_THROW(ParseCopyToVmValue({"a", "b", "c"}), std::invalid_argument);
}

TEST(RuntimeFiles, UnsafeSourcesAreRefusedWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"..\\..\\Windows\\System32\\config\\SAM", ".."},
      {"sub\\..\\..\\x.dll", ".."},
      {"sub/../x.dll", ".."},
      {"...\\x.dll", ".."},
      {"C:\\Windows\\evil.dll", "drive letter"},
      {"c:evil.dll", "drive letter"},
      {"\\\\server\\share\\x.dll", "absolute"},
      {"\\Windows\\x.dll", "absolute"},
      {"/etc/shadow", "absolute"},
      {"x.dll:stream", "':'"},
      {std::string("x\0.dll", 6), "control"},
  };
  for (const auto& [source, why] : cases) {
    const auto reason = UnsafeSourceReason(source);
    ASSERT_TRUE(reason.has_value()) << source;
    EXPECT_NE(reason->find(why), std::string::npos) << source << ": " << *reason;
    try {
      ParseCopyToVmValue({source, "x.dll"});
      ADD_FAILURE() << source << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("source"), std::string::npos) << e.what();
    }
  }
  for (const std::string ok :
       {"nvapi64.dll", "B390143\\amdxc64.dll", "a/b/c.dll", ".\\x.dll", "x..y.dll"}) {
    EXPECT_FALSE(UnsafeSourceReason(ok).has_value()) << ok;
  }
}

TEST(RuntimeFiles, DestinationsAreFileNames) {
  for (const std::string bad : {"..", ".", "sub\\x.dll", "a/b.dll", "x:y.dll", "*.dll", ""}) {
    EXPECT_TRUE(UnsafeDestinationReason(bad).has_value()) << bad;
    EXPECT_THROW(ParseCopyToVmValue({"x.dll", bad.empty() ? "." : bad}), std::invalid_argument);
  }
  EXPECT_FALSE(UnsafeDestinationReason("vulkan-1.dll").has_value());
}

TEST(RuntimeFiles, MergeKeepsTheFirstForADestinationIgnoringCase) {
  std::vector<RuntimeFile> files = {{"nvcuda_loader64.dll", "nvcuda.dll"}};
  MergeRuntimeFiles(files, {{"other.dll", "NVCUDA.DLL"}, {"nvidia-smi.exe", "nvidia-smi.exe"}});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].source, "nvcuda_loader64.dll");
  EXPECT_EQ(files[1].destination, "nvidia-smi.exe");
}

}  // namespace
}  // namespace dxshim::devices
