# libFuzzer targets for the installer: its text edits and launch detection.
# Each edit is fuzzed with its re-read, an idempotence check and a statement of which bytes it may
# change (each target's opening comment). 20 s each in the short pass: seven targets, about 75 s of
# wall time at -j2.
set(fuzz_yaml_edit_sources shim/install/edit/yaml_text.cpp shim/install/edit/command_line.cpp
    shim/base/json_text.cpp shim/base/ascii_case.cpp)
set(fuzz_command_line_sources shim/install/edit/command_line.cpp shim/base/ascii_case.cpp)
dxshim_fuzz_target(command_line_fuzz SOURCES ${fuzz_command_line_sources}
                   SEEDS tests/fuzz/corpus/command_line)
dxshim_fuzz_target(kubelet_flags_fuzz SOURCES shim/install/edit/kubelet_flags.cpp
                   ${fuzz_command_line_sources} SEEDS tests/fuzz/corpus/kubelet_flags)
dxshim_fuzz_target(kubelet_config_edit_fuzz SOURCES shim/install/edit/config_file_edit.cpp
                   ${fuzz_yaml_edit_sources} LIBS yaml-cpp
                   SEEDS tests/fuzz/corpus/kubelet_config_edit)
dxshim_fuzz_target(yaml_text_fuzz SOURCES ${fuzz_yaml_edit_sources} shim/base/utf8_text.cpp
                   LIBS yaml-cpp SEEDS tests/fuzz/corpus/yaml_text)
dxshim_fuzz_target(containerd_config_fuzz SOURCES shim/install/edit/containerd_config.cpp
                   shim/install/edit/toml_scan.cpp shim/install/edit/text_encoding.cpp
                   ${fuzz_yaml_edit_sources} LIBS yaml-cpp SEEDS tests/fuzz/corpus/containerd_config)
dxshim_fuzz_target(rke2_config_fuzz SOURCES shim/install/edit/rke2_config.cpp
                   ${fuzz_command_line_sources} shim/base/json_text.cpp shim/base/utf8_text.cpp LIBS yaml-cpp
                   SEEDS tests/fuzz/corpus/rke2_config)
dxshim_fuzz_target(kubelet_launch_fuzz SOURCES shim/install/kubelet/kubelet_launch.cpp
                   shim/install/edit/kubelet_flags.cpp shim/install/edit/config_file_edit.cpp
                   shim/install/edit/rke2_config.cpp shim/install/edit/text_encoding.cpp
                   ${fuzz_yaml_edit_sources} LIBS yaml-cpp SEEDS tests/fuzz/corpus/kubelet_launch)
