# A PTX-only build (DECODE_BENCH_PTX_ONLY: CI, no GPU) precompiles the third-party and standard headers
# that most of a target's C++ files include: their parsing is a large part of each file's compile
# time at -O1 (docs/testing.md, "The CI build"). Builds that run kernels compile each file as
# written, so a file missing an include it needs still fails there (scripts/gpu_check.sh).
#   decode_bench_precompile(<target> <header>...)   headers as for #include: "<gtest/gtest.h>"
function(decode_bench_precompile target)
  if(NOT DECODE_BENCH_PTX_ONLY)
    return()
  endif()
  set(headers)
  foreach(header IN LISTS ARGN)
    # C++ files only (a target's .cu files are compiled by nvcc); $<ANGLE-R> keeps the closing '>'
    # of a system header out of the generator expression's own syntax.
    string(REPLACE ">" "$<ANGLE-R>" header "${header}")
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# The standard headers most of the project's C++ files include.
set(DECODE_BENCH_PCH_STD <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional> <set>
                         <sstream> <stdexcept> <string> <vector>)
