#include "shim/proxy/cri_methods.h"

#include <algorithm>
#include <array>

namespace dxshim {
namespace {

// From k8s.io/cri-api pkg/apis/runtime/v1/api.proto. GetContainerEvents and the Stream* methods
// are server-streaming and deliberately absent. Sorted, for binary search.
constexpr std::array<std::string_view, 28> kRuntimeUnary = {
    "Attach",
    "CheckpointContainer",
    "ContainerStats",
    "ContainerStatus",
    "CreateContainer",
    "Exec",
    "ExecSync",
    "ListContainerStats",
    "ListContainers",
    "ListMetricDescriptors",
    "ListPodSandbox",
    "ListPodSandboxMetrics",
    "ListPodSandboxStats",
    "PodSandboxStats",
    "PodSandboxStatus",
    "PortForward",
    "RemoveContainer",
    "RemovePodSandbox",
    "ReopenContainerLog",
    "RunPodSandbox",
    "RuntimeConfig",
    "StartContainer",
    "Status",
    "StopContainer",
    "StopPodSandbox",
    "UpdateContainerResources",
    "UpdateRuntimeConfig",
    "Version",
};

constexpr std::array<std::string_view, 5> kImageUnary = {
    "ImageFsInfo", "ImageStatus", "ListImages", "PullImage", "RemoveImage",
};

constexpr std::string_view kRuntimeService = "/runtime.v1.RuntimeService/";
constexpr std::string_view kImageService = "/runtime.v1.ImageService/";

template <std::size_t N>
bool Contains(const std::array<std::string_view, N>& sorted, std::string_view name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

static_assert(std::is_sorted(kRuntimeUnary.begin(), kRuntimeUnary.end()));
static_assert(std::is_sorted(kImageUnary.begin(), kImageUnary.end()));

}  // namespace

bool IsUnaryCriMethod(std::string_view method) {
  if (method.starts_with(kRuntimeService)) {
    return Contains(kRuntimeUnary, method.substr(kRuntimeService.size()));
  }
  if (method.starts_with(kImageService)) {
    return Contains(kImageUnary, method.substr(kImageService.size()));
  }
  return false;
}

bool IsLongLivedStream(std::string_view method) {
  const auto slash = method.rfind('/');
  const auto name = slash == std::string_view::npos ? method : method.substr(slash + 1);
  return name == "GetContainerEvents" || name.starts_with("Stream");
}

}  // namespace dxshim
