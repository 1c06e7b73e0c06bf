# Unity builds (CMAKE_UNITY_BUILD, as scripts/test-sanitizers.sh builds its trees) compile each
# target's sources a few at a time as one file. A source whose file-local names (in an anonymous
# namespace, or static) are also another source's of the same target is compiled alone instead.
# A new clash fails that build naming both places: add the later file here. The unit tests'
# files are many and each names its own fixtures freely (kGi, Holder, kUuidA, ...): their
# program is never a unity build.
set(dxshim_unity_alone
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
if(TARGET unit_tests)
  set_target_properties(unit_tests PROPERTIES UNITY_BUILD OFF)
endif()
