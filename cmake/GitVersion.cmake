# The git sha and dirty flag at configure time go into every results JSON (meta.git), so a number
# can be traced to the code that produced it. Re-run cmake to refresh after committing.
find_package(Git QUIET)
set(DECODE_BENCH_GIT_SHA "unknown")
set(DECODE_BENCH_GIT_DIRTY "false")
if(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE _sha
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(DECODE_BENCH_GIT_SHA "${_sha}")
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE _status
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT "${_status}" STREQUAL "")
    set(DECODE_BENCH_GIT_DIRTY "true")
  endif()
endif()
configure_file(${CMAKE_SOURCE_DIR}/harness/build_info.hpp.in
               ${CMAKE_BINARY_DIR}/generated/build_info.hpp @ONLY)
