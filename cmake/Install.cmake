# `cmake --install`: the decode-bench executable, the backend plugin header and the decode_bench
# CMake package that plugins built outside this tree find (docs/backends.md, "Plugins"):
#   find_package(decode_bench CONFIG)  ->  decode_bench::backend_api (the header, CUDA::cudart)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(decode_bench_backend_api INTERFACE)
add_library(decode_bench::backend_api ALIAS decode_bench_backend_api)
set_target_properties(decode_bench_backend_api PROPERTIES EXPORT_NAME backend_api)
target_include_directories(decode_bench_backend_api INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(decode_bench_backend_api INTERFACE CUDA::cudart)

# The installed binary keeps the run paths of the libraries it links outside the system's (the CUDA
# toolkit's lib64 for libcudart, CUPTI and NVML where the loader does not search it).
set_target_properties(decode-bench PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS decode-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/decode_bench/backend.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/decode_bench)
install(TARGETS decode_bench_backend_api EXPORT decode_benchTargets)

set(_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/decode_bench)
install(EXPORT decode_benchTargets NAMESPACE decode_bench:: DESTINATION ${_package_dir})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/decode_benchConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/decode_benchConfig.cmake INSTALL_DESTINATION ${_package_dir})
# The plugin ABI has its own version (DECODE_BENCH_BACKEND_ABI_VERSION, checked when a library is
# loaded); the package version only keeps 0.x releases apart.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/decode_benchConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/decode_benchConfig.cmake ${CMAKE_BINARY_DIR}/decode_benchConfigVersion.cmake
        DESTINATION ${_package_dir})
