// Container paths compared as the runtime will see them (shim/gpu/container_path.h): Go's
// filepath.Clean with Windows and POSIX rules, and containerd 1.7's destination for a Windows
// mount (parseMount in pkg/cri/opts/spec_windows_opts.go), with the forms kubelet really sends.
#include "shim/gpu/container_path.h"

#include <gtest/gtest.h>

namespace dxshim {
namespace {

TEST(CleanWindowsPath, AsGoCleansIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"c:/Windows/System32/x.dll", "c:\\Windows\\System32\\x.dll"},
      {"C:\\Windows\\System32\\X.DLL", "C:\\Windows\\System32\\X.DLL"},
      {"\\Windows\\System32\\x.dll", "\\Windows\\System32\\x.dll"},
      {"c:\\windows\\system32\\.\\x.dll", "c:\\windows\\system32\\x.dll"},
      {"C:\\a\\\\b\\", "C:\\a\\b"},
      {"C:/a/./b/../c", "C:\\a\\c"},
      {"C:\\..\\..\\a", "C:\\a"},  // `..` at the root stays at the root
      {"a\\..\\..\\b", "..\\b"},   // a relative path keeps its leading `..`
      {"C:a\\.\\b", "C:a\\b"},     // drive-relative
      {"C:", "C:."},
      {"C:\\", "C:\\"},
      {"", "."},
      {"//host/share/a/../b", "\\\\host\\share\\b"},
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(CleanWindowsPath(in), out) << in;
}

TEST(CleanPosixPath, AsGoCleansIt) {
  EXPECT_EQ(CleanPosixPath("/usr/lib//dxshim/./libx.so"), "/usr/lib/dxshim/libx.so");
  EXPECT_EQ(CleanPosixPath("/usr/lib/dxshim/../dxshim/libx.so/"), "/usr/lib/dxshim/libx.so");
  EXPECT_EQ(CleanPosixPath("/../a"), "/a");
  EXPECT_EQ(CleanPosixPath("a/../../b"), "../b");
  EXPECT_EQ(CleanPosixPath(""), ".");
}

TEST(WindowsMountDestination, WhatContainerdHandsToHcs) {
  const std::string host = "C:\\store\\x.dll";
  // Kubelet's makeAbsolutePath: drive letter added, forward slashes kept.
  EXPECT_EQ(WindowsMountDestination("c:/Windows/System32/x.dll", host),
            "c:\\Windows\\System32\\x.dll");
  // A rooted destination without a drive gets C:.
  EXPECT_EQ(WindowsMountDestination("\\Windows\\System32\\x.dll", host),
            "C:\\Windows\\System32\\x.dll");
  EXPECT_EQ(WindowsMountDestination("/Windows/System32/x.dll", host),
            "C:\\Windows\\System32\\x.dll");
  // A whole drive, and anything mounted from a named pipe, are passed on as written.
  EXPECT_EQ(WindowsMountDestination("D:", host), "D:");
  EXPECT_EQ(WindowsMountDestination("\\\\.\\pipe\\x/..", "\\\\.\\pipe\\docker_engine"),
            "\\\\.\\pipe\\x/..");
}

TEST(MountDestinationKey, KubeletsFormsOfOneFileAreOneDestination) {
  const std::string ours = MountDestinationKey("C:\\Windows\\System32\\x.dll", "C:\\s\\x", true);
  for (const char* form : {"c:/Windows/System32/x.dll", "C:\\Windows\\System32\\X.DLL",
                           "\\Windows\\System32\\x.dll", "c:\\windows\\system32\\.\\x.dll",
                           "/windows/system32//x.dll", "C:\\Windows\\Temp\\..\\System32\\x.dll"}) {
    EXPECT_EQ(MountDestinationKey(form, "C:\\pod\\volume\\x.dll", true), ours) << form;
  }
  EXPECT_NE(MountDestinationKey("C:\\Windows\\SysWOW64\\x.dll", "C:\\s\\x", true), ours);
  EXPECT_NE(MountDestinationKey("D:\\Windows\\System32\\x.dll", "C:\\s\\x", true), ours);
  // Linux: case matters, the rest is cleaned.
  EXPECT_EQ(MountDestinationKey("/usr/lib/dxshim//x.so", "/s", false),
            MountDestinationKey("/usr/lib/dxshim/x.so", "/s", false));
  EXPECT_NE(MountDestinationKey("/usr/lib/dxshim/X.so", "/s", false),
            MountDestinationKey("/usr/lib/dxshim/x.so", "/s", false));
}

}  // namespace
}  // namespace dxshim
