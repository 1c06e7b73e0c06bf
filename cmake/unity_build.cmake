# Unity builds (CMAKE_UNITY_BUILD: the test suite's sanitizer trees, scripts/test-sanitizers.sh,
# and the `windows-mingw` preset) compile each target's sources a few at a time as one file. A
# source whose file-local names (in an anonymous namespace, or static) are also another source's
# of the same target is compiled alone instead; so is one whose types in an anonymous namespace
# are members of a class with linkage (GCC's -Wsubobject-linkage once the file is included). A
# clash of definitions fails that build naming both places: add the later file here. (Two
# file-local functions of one name but different parameters would silently overload: name them
# apart.) The unit tests' files
# are many and each names its own fixtures freely (kGi, Holder, kUuidA, ...): their programs are
# never unity builds.
set(dxshim_unity_alone
    devices/windows/cuda_uuids.cpp
    devices/windows/dxcore_adapters.cpp
    devices/windows/nvidia_query.cpp
    devices/windows/nvml_uuids.cpp
    devices/windows/pnp_devices.cpp
    devices/windows/registry_runtime_files.cpp
    devices/windows/wide_text.cpp
    shim/cli/doctor_command.cpp
    shim/cli/serve_command.cpp
    shim/install/edit/toml_scan.cpp
    shim/install/edit/yaml_text.cpp
    shim/proxy/pipe_name.cpp
    shim/socket_bridge/stream_bridge.cpp)
# The property is set in the folder whose CMakeLists.txt lists the source (tests/ for tests/*/).
foreach(source IN LISTS dxshim_unity_alone)
  get_filename_component(folder ${PROJECT_SOURCE_DIR}/${source} DIRECTORY)
  while(NOT EXISTS ${folder}/CMakeLists.txt)
    get_filename_component(folder ${folder} DIRECTORY)
  endwhile()
  if(folder STREQUAL "${PROJECT_SOURCE_DIR}/tests" AND NOT DXSHIM_BUILD_TESTS)
    continue()
  endif()
  set_source_files_properties(${PROJECT_SOURCE_DIR}/${source} DIRECTORY ${folder}
                              PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endforeach()
# Nor are the other test programs of many files, the node stand-ins' native tests, nor
# tree-sitter's C sources (generated, and already one file per part).
foreach(target unit_tests concurrent_unit_tests node_standin_powershell_test node_standin_wire_test
               tree_sitter_powershell)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
  endif()
endforeach()
