# The commit the binary is built from goes into every results JSON (meta.git), so a number can be
# traced to the code that produced it, also when the tree has no .git at run time. In order:
#   1. -DDECODE_BENCH_GIT_SHA=<sha> [-DDECODE_BENCH_GIT_DIRTY=ON]   (source "cmake_option")
#   2. environment DECODE_BENCH_GIT_SHA [DECODE_BENCH_GIT_DIRTY=1]   (source "environment")
#   3. a `.decode-bench-commit` file at the top of the source tree: the sha on its first line,
#      optionally "dirty" on the second (scripts/stamp_commit.sh writes it before a tree is
#      copied)                                                       (source "commit_file")
#   4. git rev-parse HEAD and git status in the source tree          (source "git")
#   5. "unknown"                                                     (source "none")
# The stamp comes before git because a copied tree can carry a stale .git: the copy a GPU machine
# received on 2026-11-23 held the .git of an older checkout, and its results named that commit.
# When both exist and disagree, configure warns (re-stamp, or delete the file, after committing).
# Taken at configure time: re-run cmake after committing to refresh it.
set(DECODE_BENCH_GIT_SHA "" CACHE STRING "Commit the sources come from, for trees without .git (overrides git)")
option(DECODE_BENCH_GIT_DIRTY "With DECODE_BENCH_GIT_SHA: the tree had uncommitted changes" OFF)

set(_db_sha "unknown")
set(_db_dirty "false")
set(_db_source "none")
if(NOT "${DECODE_BENCH_GIT_SHA}" STREQUAL "")
  set(_db_sha "${DECODE_BENCH_GIT_SHA}")
  set(_db_source "cmake_option")
  if(DECODE_BENCH_GIT_DIRTY)
    set(_db_dirty "true")
  endif()
elseif(NOT "$ENV{DECODE_BENCH_GIT_SHA}" STREQUAL "")
  set(_db_sha "$ENV{DECODE_BENCH_GIT_SHA}")
  set(_db_source "environment")
  if("$ENV{DECODE_BENCH_GIT_DIRTY}" MATCHES "^(1|true|TRUE|ON|on|yes)$")
    set(_db_dirty "true")
  endif()
else()
  if(EXISTS "${CMAKE_SOURCE_DIR}/.decode-bench-commit")
    file(STRINGS "${CMAKE_SOURCE_DIR}/.decode-bench-commit" _lines LIMIT_COUNT 2)
    list(GET _lines 0 _db_sha)
    string(STRIP "${_db_sha}" _db_sha)
    set(_db_source "commit_file")
    list(LENGTH _lines _n)
    if(_n GREATER 1)
      list(GET _lines 1 _second)
      if(_second MATCHES "dirty")
        set(_db_dirty "true")
      endif()
    endif()
    # Rebuild the configuration when the file changes (a new stamp before a new copy).
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/.decode-bench-commit")
  endif()
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")  # a directory, or a file in a worktree
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE _sha
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _db_source STREQUAL "commit_file")
      string(STRIP "${_sha}" _sha)
      if(NOT _sha STREQUAL _db_sha)
        message(WARNING "decode-bench: .decode-bench-commit names ${_db_sha} but git HEAD is ${_sha}; "
                        "the results will name ${_db_sha} (re-run scripts/stamp_commit.sh or delete the file)")
      endif()
    elseif(_rc EQUAL 0)
      set(_db_sha "${_sha}")
      set(_db_source "git")
      execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
        WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE _status
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(NOT "${_status}" STREQUAL "")
        set(_db_dirty "true")
      endif()
    endif()
  endif()
endif()
string(TOLOWER "${_db_sha}" _db_sha)
set(_hex "[0-9a-f]")
if(NOT _db_source STREQUAL "none" AND NOT _db_sha MATCHES "^${_hex}${_hex}${_hex}${_hex}${_hex}${_hex}${_hex}+$")
  message(FATAL_ERROR "decode-bench: the commit from ${_db_source} is '${_db_sha}', not a hex git sha "
                      "(at least 7 hex digits)")
endif()
message(STATUS "decode-bench commit: ${_db_sha} (from ${_db_source}, dirty: ${_db_dirty})")
set(DECODE_BENCH_GIT_SHA_VALUE "${_db_sha}")
set(DECODE_BENCH_GIT_DIRTY_VALUE "${_db_dirty}")
set(DECODE_BENCH_GIT_SOURCE "${_db_source}")
configure_file(${CMAKE_SOURCE_DIR}/harness/build_info.hpp.in
               ${CMAKE_BINARY_DIR}/generated/build_info.hpp @ONLY)
