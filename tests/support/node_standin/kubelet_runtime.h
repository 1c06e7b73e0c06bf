// kubelet's CRI client, as far as the stand-in plays it: a real CRI Version call every second over
// one gRPC connection to --container-runtime-endpoint, reconnecting as kubelet's does.
#pragma once

#include <string>

namespace dxshim::test::node_standin {

// Until g_stop, once a second: /runtime.v1.RuntimeService/Version with VersionRequest { version =
// "0.1.0" } (kubernetes 000f2605 pkg/kubelet/kuberuntime/kuberuntime_manager.go
// kubeRuntimeAPIVersion; the CRI's api.proto: version = 1) on a connection kept open, its
// :authority "localhost" (k8s.io/cri-client remote_runtime.go, kubernetes dc84f0e4). A failed
// connection is dialed again with gRPC's backoff as kubelet configures it (remote_runtime.go:
// base 100 ms, max 3 s; grpc-go backoff.DefaultConfig: factor 1.6, jitter 0.2). ENDPOINT:
// npipe://./pipe/NAME (or npipe:////./pipe/NAME) or tcp://HOST:PORT. Each call appends
// `version <pid> status <code> <message>`, or `version <pid> unavailable <why>` when there is no
// connection, to LOG.
void CallRuntimeEverySecond(const std::wstring& endpoint, const std::wstring& log);

}  // namespace dxshim::test::node_standin
