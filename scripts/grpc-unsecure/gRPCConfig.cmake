# The CMake package of the gRPC libraries scripts/grpc-unsecure/CMakeLists.txt installs: the
# packages gRPC was configured with (the "package" providers of scripts/build-windows-deps.sh),
# then the targets gRPC::grpc++_unsecure, gRPC::grpc_unsecure, gRPC::gpr, gRPC::upb and
# gRPC::address_sorting.
include(CMakeFindDependencyMacro)
find_dependency(Threads)
find_dependency(ZLIB)
find_dependency(absl CONFIG)
find_dependency(protobuf CONFIG)
find_dependency(c-ares CONFIG)
include(${CMAKE_CURRENT_LIST_DIR}/gRPCTargets.cmake)
