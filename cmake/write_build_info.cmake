# Writes build_info.inc (OUT) with the git commit the sources are at, at every build, touching
# the file only when its text changes (so that one small file recompiles after a commit, nothing
# else). Run by `cmake -P` with SOURCE_DIR and OUT set. Outside a git checkout (a packager's
# tarball) the commit is DXSHIM_GIT_COMMIT if given, else "unknown".
if(DEFINED DXSHIM_GIT_COMMIT AND NOT DXSHIM_GIT_COMMIT STREQUAL "")
  set(commit "${DXSHIM_GIT_COMMIT}")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE failed ERROR_QUIET)
  if(failed OR commit STREQUAL "")
    set(commit "unknown")
  else()
    # Tracked files changed since that commit: the binary is not that commit's.
    execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "#define DXSHIM_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" previous)
endif()
if(NOT previous STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
