// Named-pipe endpoints (shim/proxy/pipe_name.h): both spellings kubelet accepts map to one pipe
// path and back, and what is not a local pipe name is refused with the reason.
#include "shim/proxy/pipe_name.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace dxshim {
namespace {

TEST(PipeName, BothSpellingsKubeletAccepts) {
  EXPECT_EQ(PipePathFromEndpoint("npipe://./pipe/containerd-containerd"),
            "\\\\.\\pipe\\containerd-containerd");
  EXPECT_EQ(PipePathFromEndpoint("npipe:////./pipe/dxshim"), "\\\\.\\pipe\\dxshim");
  EXPECT_EQ(PipeEndpointFromPath(PipePathFromEndpoint("npipe:////./pipe/dxshim")),
            "npipe://./pipe/dxshim");
}

TEST(PipeName, Rejections) {
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"npipe://server/pipe/x", "only local pipes"},
           {"npipe://./pipe/", "empty"},
           {"npipe://./pipe/a\\b", "separator"},
           {"npipe://./pipe/a/b", "separator"},
           {"npipe://./pipe/" + std::string(300, 'x'), "too long"},
           {"unix:///x", "expected npipe"}}) {
    try {
      PipePathFromEndpoint(text);
      ADD_FAILURE() << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dxshim
