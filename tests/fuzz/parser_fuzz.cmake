# libFuzzer targets for the parsers that requests and files reach (each target's opening comment
# states its properties). 20 s each in the short pass.
dxshim_fuzz_target(http_request_fuzz SOURCES shim/admin/http_request.cpp SECONDS 20
                   SEEDS tests/fuzz/corpus/http_request)
dxshim_fuzz_target(byte_quantity_fuzz SOURCES devices/byte_quantity.cpp
                   devices/allocation/gpu_memory.cpp SECONDS 20
                   SEEDS tests/fuzz/corpus/byte_quantity)
dxshim_fuzz_target(
  runtime_record_fuzz SECONDS 20 SEEDS tests/fuzz/corpus/runtime_record
  SOURCES shim/runtime_record/runtime_record.cpp shim/base/comma_list.cpp
          ${PROJECT_BINARY_DIR}/cri-api/gen/runtime/v1/api.pb.cc
  LIBS protobuf)
dxshim_fuzz_target(
  serve_config_fuzz SECONDS 20 SEEDS tests/fuzz/corpus/serve_config
  SOURCES config/serve_config.cpp config/serve_config_keys.cpp config/serve_option_table.cpp
          config/serve_option_default_posix.cpp
          config/extra_runtime_files_config.cpp config/device_snapshot_config.cpp
          devices/make_device_source.cpp devices/make_device_source_posix.cpp
          devices/linux_discovery.cpp devices/node_labels.cpp
          devices/device_table.cpp devices/vendor_runtime_files.cpp devices/device_source.cpp
          shim/base/host_port.cpp ${fuzz_device_sources}
  LIBS yaml-cpp spdlog fmt)
# Allocate on the callback service itself (a default reactor test peer stands for gRPC).
dxshim_fuzz_target(
  device_plugin_allocate_fuzz SECONDS 20 SEEDS tests/fuzz/corpus/device_plugin_allocate
  SOURCES shim/device_plugin/device_plugin_service.cpp shim/device_plugin/plugin_resource.cpp
          shim/device_plugin/plugin_slots.cpp shim/device_plugin/plugin_memory_units.cpp
          devices/device_source.cpp devices/device_table.cpp devices/vendor_runtime_files.cpp
          devices/allocation/placement.cpp devices/allocation/memory_fit.cpp
          shim/ledger/ledger.cpp shim/install/kubelet/kubelet_checkpoint.cpp
          shim/runtime_record/runtime_record.cpp ${fuzz_device_sources}
          ${PROJECT_BINARY_DIR}/cri-api/gen/runtime/v1/api.pb.cc
          ${PROJECT_BINARY_DIR}/cri-api/gen/deviceplugin/v1beta1/api.pb.cc
          ${PROJECT_BINARY_DIR}/cri-api/gen/deviceplugin/v1beta1/api.grpc.pb.cc
  LIBS yaml-cpp protobuf grpc++_unsecure grpc gpr absl_synchronization spdlog fmt)
