# Every dependency is found with find_package first (Debian/Ubuntu packages, conda, vcpkg);
# FetchContent's FIND_PACKAGE_ARGS falls back to a pinned download only when it is missing.
include(FetchContent)

find_package(CUDAToolkit REQUIRED)  # CUDA::cudart, CUDA::cupti, CUDA::nvtx3

FetchContent_Declare(nlohmann_json
  URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz
  URL_HASH SHA256=d6c65aca6b1ed68e7a182f4757257b107ae403032760ed6ef121c9d55e81757d
  FIND_PACKAGE_ARGS 3.10 NAMES nlohmann_json)

FetchContent_Declare(CLI11
  GIT_REPOSITORY https://github.com/CLIUtils/CLI11.git
  GIT_TAG v2.4.2
  GIT_SHALLOW TRUE
  FIND_PACKAGE_ARGS 2.1 NAMES CLI11)

set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
FetchContent_Declare(benchmark
  GIT_REPOSITORY https://github.com/google/benchmark.git
  GIT_TAG v1.8.3
  GIT_SHALLOW TRUE
  FIND_PACKAGE_ARGS 1.7 NAMES benchmark)

set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
FetchContent_Declare(GTest
  GIT_REPOSITORY https://github.com/google/googletest.git
  GIT_TAG v1.14.0
  GIT_SHALLOW TRUE
  FIND_PACKAGE_ARGS 1.11 NAMES GTest)

FetchContent_MakeAvailable(nlohmann_json CLI11 benchmark)
if(DECODE_BENCH_BUILD_TESTS)
  FetchContent_MakeAvailable(GTest)
endif()
