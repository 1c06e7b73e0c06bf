# dxshim_fuzz_target(NAME SOURCES src... [LIBS lib...] [SEEDS dir...] [SECONDS s])
# Builds tests/fuzz/NAME.cpp with SOURCES (paths from the project root) by clang with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer (libFuzzer needs clang; the rest of the build
# uses g++), and adds the ctest `fuzz_NAME_short`: a bounded pass of SECONDS (default 20) over a
# copy of SEEDS (tests/fuzz/run_fuzz.sh). The nightly-length pass over every target:
# tests/fuzz/run_all_fuzz.sh build 3600 CORPUS_DIR (tests/README.md, "Fuzzing").
find_program(DXSHIM_CLANGXX clang++ REQUIRED)
set(fuzz_dir ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
set_property(GLOBAL PROPERTY dxshim_fuzz_targets)
function(dxshim_fuzz_target name)
  cmake_parse_arguments(F "" "SECONDS" "SOURCES;LIBS;SEEDS" ${ARGN})
  if(NOT F_SECONDS)
    set(F_SECONDS 20)
  endif()
  set(sources ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}.cpp)
  set(depends ${sources} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_input.h)
  foreach(source ${F_SOURCES})
    if(IS_ABSOLUTE ${source})
      set(path ${source})
    else()
      set(path ${PROJECT_SOURCE_DIR}/${source})
    endif()
    list(APPEND sources ${path})
    list(APPEND depends ${path})
    # A source's own header, when it has one, is a dependency too.
    string(REGEX REPLACE "\\.(cpp|cc)$" ".h" header ${path})
    if(EXISTS ${header})
      list(APPEND depends ${header})
    endif()
  endforeach()
  set(libs)
  foreach(lib ${F_LIBS})
    list(APPEND libs -l${lib})
  endforeach()
  add_custom_command(
    OUTPUT ${fuzz_dir}/${name}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${fuzz_dir}
    COMMAND ${DXSHIM_CLANGXX} -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined
            -fno-sanitize-recover=undefined "-DDXSHIM_SOURCE_DIR=\"${PROJECT_SOURCE_DIR}\""
            -I${PROJECT_SOURCE_DIR} -I${PROJECT_BINARY_DIR}/cri-api/gen
            # socket_api.h's native types: the POSIX ones, as shim/socket_bridge's CMake chooses
            -I${PROJECT_SOURCE_DIR}/shim/socket_bridge/posix ${sources} ${libs}
            -lpthread -o ${fuzz_dir}/${name}
    DEPENDS ${depends}
    COMMENT "Building fuzz target ${name} with clang"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY dxshim_fuzz_targets ${fuzz_dir}/${name})
  set(seeds)
  foreach(seed ${F_SEEDS})
    if(IS_ABSOLUTE ${seed})
      list(APPEND seeds ${seed})
    else()
      list(APPEND seeds ${PROJECT_SOURCE_DIR}/${seed})
    endif()
  endforeach()
  string(REGEX REPLACE "_fuzz$" "" short ${name})
  add_test(NAME fuzz_${short}_short COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh
                                            ${fuzz_dir}/${name} ${F_SECONDS} ${seeds})
  math(EXPR timeout "${F_SECONDS} * 3 + 120")
  set_tests_properties(fuzz_${short}_short PROPERTIES TIMEOUT ${timeout} LABELS fuzz
                                                      COST ${F_SECONDS})
endfunction()
