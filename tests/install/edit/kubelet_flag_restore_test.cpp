// Putting kubelet flags back (shim/install/edit/kubelet_flag_restore.h): only the flags install set
// get their old values back, in each place kubelet's flags are kept, and every other byte of the
// value as someone left it; where kubelet's flags start on a service's command line.
#include "shim/install/edit/kubelet_flag_restore.h"

#include <gtest/gtest.h>

#include "shim/install/edit/kubelet_flags.h"

namespace dxshim::install {
namespace {

// The value RestoreFlags puts back, or nullopt when it puts none back.
std::optional<std::string> PutBackFlags(FlagHolder holder, const std::string& before,
                                        const std::string& written, const std::string& now,
                                        std::span<const std::string_view> names) {
  const FlagRestore r = RestoreFlags(holder, before, written, now, names);
  if (r.kind != FlagRestore::Kind::kPutBack) return std::nullopt;
  EXPECT_NE(r.value, now) << "a value put back differs from the one given";
  return r.value;
}
bool HoldsNoFlagSet(FlagHolder holder, const std::string& before, const std::string& written,
                    const std::string& now, std::span<const std::string_view> names) {
  return RestoreFlags(holder, before, written, now, names).kind == FlagRestore::Kind::kNoneLeft;
}

constexpr std::string_view kNames[] = {"container-runtime-endpoint", "node-labels"};

TEST(KubeletFlagRestore, ServiceCommandLineGetsTheOldEndpointBackAndKeepsAnEditSince) {
  const std::string before =
      R"("C:\k\kubelet.exe" --container-runtime-endpoint=npipe:////./pipe/containerd-containerd)";
  const std::string written =
      R"("C:\k\kubelet.exe" --container-runtime-endpoint=npipe:////./pipe/dxshim)";
  const std::string now = written + " --v=4";  // someone added a flag since install
  EXPECT_EQ(PutBackFlags(FlagHolder::kServiceCommandLine, before, written, now, kNames),
            before + " --v=4");
  // Unchanged since install, or already put back: nothing to put back.
  EXPECT_EQ(PutBackFlags(FlagHolder::kServiceCommandLine, before, written, before, kNames),
            std::nullopt);
  // A flag before kubelet.exe's word is the service host's, not kubelet's: left alone.
  EXPECT_EQ(PutBackFlags(FlagHolder::kServiceCommandLine, before, written,
                         "host.exe --container-runtime-endpoint=npipe:////./pipe/dxshim "
                         "C:\\k\\kubelet.exe --v=4",
                         kNames),
            std::nullopt);
}

TEST(KubeletFlagRestore, AFlagInstallAddedIsRemovedFromArgumentsButNotFromKubeadmsFile) {
  EXPECT_EQ(PutBackFlags(FlagHolder::kArguments, "--v=2", "--v=2 --node-labels=dxshim.io/gpu=1",
                         "--v=3 --node-labels=dxshim.io/gpu=1", kNames),
            "--v=3");
  const std::string file_before = "KUBELET_KUBEADM_ARGS=\"--v=2\"\n";
  const std::string file_written = "KUBELET_KUBEADM_ARGS=\"--v=2 --node-labels=a=b\"\n";
  EXPECT_EQ(PutBackFlags(FlagHolder::kKubeadmFlagsFile, file_before, file_written,
                         "# edited\n" + file_written, kNames),
            std::nullopt)
      << "kubeadm's file had no such flag: dxshim cannot remove it there";
  EXPECT_EQ(PutBackFlags(
                FlagHolder::kKubeadmFlagsFile, "KUBELET_KUBEADM_ARGS=\"--node-labels=a=b\"\n",
                "KUBELET_KUBEADM_ARGS=\"--node-labels=a=b,dxshim.io/gpu=1\"\n",
                "# edited\nKUBELET_KUBEADM_ARGS=\"--node-labels=a=b,dxshim.io/gpu=1\"\n", kNames),
            "# edited\nKUBELET_KUBEADM_ARGS=\"--node-labels=a=b\"\n");
}

TEST(KubeletFlagRestore, ALineMadeAgainWithoutTheFlagsHoldsNoneSet) {
  const std::string before = "kubelet.exe --container-runtime-endpoint=npipe:////./pipe/c";
  const std::string written = "kubelet.exe --container-runtime-endpoint=npipe:////./pipe/d";
  EXPECT_TRUE(HoldsNoFlagSet(FlagHolder::kServiceCommandLine, before, written, "kubelet.exe --v=2",
                             kNames));
  EXPECT_FALSE(HoldsNoFlagSet(FlagHolder::kServiceCommandLine, before, written, written, kNames));
  EXPECT_FALSE(
      HoldsNoFlagSet(FlagHolder::kServiceCommandLine, before, before, "kubelet.exe", kNames))
      << "install set nothing there";
  EXPECT_EQ(RestoreFlags(FlagHolder::kServiceCommandLine, before, written,
                         "kubelet.exe --container-runtime-endpoint=npipe:////./pipe/e", kNames)
                .kind,
            FlagRestore::Kind::kCannot)
      << "someone set the flag to a third value since install: theirs, not put back";
}

TEST(KubeletFlagRestore, KubeletFlagsStartAfterTheWordNamingKubeletExe) {
  EXPECT_EQ(KubeletFlagsStart(SplitCommandLine(R"("C:\k\Kubelet.EXE" --v=2)")), 1U);
  EXPECT_EQ(KubeletFlagsStart(SplitCommandLine("host.exe --x C:/k/kubelet.exe --v=2")), 3U);
  EXPECT_EQ(KubeletFlagsStart(SplitCommandLine("host.exe --x")), std::nullopt);
}

}  // namespace
}  // namespace dxshim::install
