# Writes OUTPUT (build_commit.txt in the build folder) with the commit the build was made from,
# "-dirty" when the working tree differed from it, so that a build folder carried to another
# machine (scripts/gpu_check.sh) still says what code it holds. Run at every build by the
# ozdgemm_build_commit target; the file changes only when the commit does.
#   cmake -DSOURCE=<checkout> -DOUTPUT=<file> -P build_commit.cmake
execute_process(COMMAND git -C ${SOURCE} rev-parse --short HEAD
                OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE _rc ERROR_QUIET)
if(NOT _rc EQUAL 0 OR _commit STREQUAL "")
  set(_commit "unknown (not a git checkout)")
else()
  execute_process(COMMAND git -C ${SOURCE} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE _changes ERROR_QUIET)
  if(NOT _changes STREQUAL "")
    string(APPEND _commit "-dirty")
  endif()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake)
ozdgemm_write_if_changed(${OUTPUT} "${_commit}\n")
