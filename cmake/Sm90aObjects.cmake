# Device code that needs sm_90a (warpgroup MMA), which runs on compute capability 9.0 only: each
# unit of it is compiled for DECODE_BENCH_SM90A_ARCH alone, in an object library of its own whose
# objects join `owner`, where the build targets Hopper (DECODE_BENCH_WGMMA, kernels/CMakeLists.txt);
# the caller links a stub instead elsewhere.
#   decode_bench_sm90a_objects(OWNER NAME SOURCES file... [LINK target...])
function(decode_bench_sm90a_objects owner name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  add_library(${name} OBJECT ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES ${DECODE_BENCH_SM90A_ARCH})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE CUDA::cudart ${ARG_LINK})
  target_compile_options(${name} PRIVATE ${DECODE_BENCH_LINEINFO})
  decode_bench_warnings(${name})
  target_sources(${owner} PRIVATE $<TARGET_OBJECTS:${name}>)
endfunction()
