# dxshim_fuzz_target(NAME SOURCES src... [LIBS lib...] [SEEDS dir...] [SECONDS s])
# Builds tests/fuzz/NAME.cpp with SOURCES (paths from the project root, or generated ones in the
# build tree) by clang with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer (libFuzzer needs clang; the `linux` preset's
# build uses g++), and adds the ctest `fuzz_NAME_short`: a bounded pass of SECONDS (default 20) over a
# copy of SEEDS (tests/fuzz/run_fuzz.sh). The nightly-length pass over every target:
# tests/fuzz/run_all_fuzz.sh build 3600 CORPUS_DIR (tests/README.md, "Fuzzing").
find_program(DXSHIM_CLANGXX clang++ REQUIRED)
set(fuzz_dir ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
set_property(GLOBAL PROPERTY dxshim_fuzz_targets)
set(dxshim_fuzz_flags
    -std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
    "-DDXSHIM_SOURCE_DIR=\"${PROJECT_SOURCE_DIR}\"" -I${PROJECT_SOURCE_DIR}
    -I${PROJECT_BINARY_DIR}/cri-api/gen
    # socket_api.h's native types: the POSIX ones, as shim/socket_bridge's CMake chooses
    -I${PROJECT_SOURCE_DIR}/shim/socket_bridge/posix)

# Each source the fuzz targets share is compiled once, into fuzz/obj/ (its headers tracked by the
# compiler's depfile), and linked into every target that names it: the targets' sources overlap
# (the device sources, the CRI's generated code), and objects of their own compile in parallel.
function(dxshim_fuzz_object path out)
  # Generated: in the build tree (which may lie inside the source tree, as build-asan/ does).
  string(FIND "${path}" "${PROJECT_BINARY_DIR}/" in_build)
  if(in_build EQUAL 0)
    file(RELATIVE_PATH rel ${PROJECT_BINARY_DIR} ${path})
    set(rel gen/${rel})
  else()
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${path})
  endif()
  set(object ${fuzz_dir}/obj/${rel}.o)
  get_property(known GLOBAL PROPERTY dxshim_fuzz_object_${rel} SET)
  if(NOT known)
    set_property(GLOBAL PROPERTY dxshim_fuzz_object_${rel} ${object})
    get_filename_component(object_dir ${object} DIRECTORY)
    # protoc's output: coverage-guided, not sanitized (CMakeLists.txt, dxshim_not_sanitized).
    set(unsanitized)
    if(rel MATCHES "^gen/")
      set(unsanitized -fno-sanitize=address,undefined)
    endif()
    add_custom_command(
      OUTPUT ${object}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${object_dir}
      COMMAND ${DXSHIM_CLANGXX} ${dxshim_fuzz_flags} ${unsanitized} -MD -MF ${object}.d -c ${path}
              -o ${object}
      DEPENDS ${path}
      DEPFILE ${object}.d
      COMMENT "Compiling ${rel} for the fuzz targets with clang"
      VERBATIM)
  endif()
  set(${out} ${object} PARENT_SCOPE)
endfunction()

function(dxshim_fuzz_target name)
  cmake_parse_arguments(F "" "SECONDS" "SOURCES;LIBS;SEEDS" ${ARGN})
  if(NOT F_SECONDS)
    set(F_SECONDS 20)
  endif()
  set(objects)
  foreach(source fuzz/${name}.cpp ${F_SOURCES})
    if(IS_ABSOLUTE ${source})
      set(path ${source})
    elseif(source MATCHES "^fuzz/")
      set(path ${CMAKE_CURRENT_SOURCE_DIR}/${source})
    else()
      set(path ${PROJECT_SOURCE_DIR}/${source})
    endif()
    dxshim_fuzz_object(${path} object)
    list(APPEND objects ${object})
  endforeach()
  set(libs)
  foreach(lib ${F_LIBS})
    list(APPEND libs -l${lib})
  endforeach()
  add_custom_command(
    OUTPUT ${fuzz_dir}/${name}
    COMMAND ${DXSHIM_CLANGXX} -fsanitize=fuzzer,address,undefined ${objects} ${libs} -lpthread
            -o ${fuzz_dir}/${name}
    DEPENDS ${objects}
    COMMENT "Linking fuzz target ${name} with clang"
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
