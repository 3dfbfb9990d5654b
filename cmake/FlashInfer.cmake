# FlashInfer's C++/CUDA headers for the flashinfer backend (backends/flashinfer/): header-only
# templates compiled by nvcc into our own launchers, linked against cudart alone. The headers come
# from the flashinfer-python wheel (flashinfer/data/include, with the CCCL it is written against in
# flashinfer/data/cccl) and are never copied into this repository. docs/decisions/flashinfer-backend.md
# says why and how.
#
# DECODE_BENCH_FLASHINFER: AUTO (default) builds the backend when the headers can be had (not in a
# PTX-only build, where no kernel runs), ON requires them (configure fails otherwise), OFF never
# builds it. Where they come from, first found:
#   1. FLASHINFER_ROOT (cache variable or environment): an unpacked wheel or site-packages folder
#      (holding flashinfer/data/include), the flashinfer package folder (data/include) or its data
#      folder (include);
#   2. an installed flashinfer python package (python3's importlib finds it; nothing is imported);
#   3. the pinned wheel, downloaded by `pip download` into the build tree (time-limited), its sha256
#      checked, the headers and licence unpacked beside it.
# Sets DECODE_BENCH_FLASHINFER_FOUND, DECODE_BENCH_FLASHINFER_REASON (why not, when not found),
# DECODE_BENCH_FLASHINFER_VERSION, DECODE_BENCH_FLASHINFER_SOURCE and the interface target
# decode_bench::flashinfer_headers; and, for FlashInfer's Hopper MLA kernel (written on CUTLASS 3,
# whose headers the wheel carries in flashinfer/data/cutlass), DECODE_BENCH_FLASHINFER_CUTLASS_FOUND,
# DECODE_BENCH_FLASHINFER_CUTLASS_REASON and the interface target decode_bench::flashinfer_cutlass_headers.
# tests/flashinfer_cmake_check.sh checks each way and refusal.

set(DECODE_BENCH_FLASHINFER AUTO CACHE STRING "Build the FlashInfer backend: AUTO (when its headers can be had), ON or OFF")
set_property(CACHE DECODE_BENCH_FLASHINFER PROPERTY STRINGS AUTO ON OFF)
set(FLASHINFER_ROOT "" CACHE PATH "An unpacked flashinfer-python wheel or its flashinfer/data folder (else: the installed package, else the pinned wheel)")
set(DECODE_BENCH_FLASHINFER_DOWNLOAD_TIMEOUT 180 CACHE STRING "Seconds the configure may spend downloading the FlashInfer wheel")

# The pinned wheel: the version the peer numbers compared against were measured with.
set(DECODE_BENCH_FLASHINFER_PIN 0.6.18.post1)
set(DECODE_BENCH_FLASHINFER_WHEEL flashinfer_python-${DECODE_BENCH_FLASHINFER_PIN}-py3-none-any.whl)
set(DECODE_BENCH_FLASHINFER_WHEEL_SHA256 adb6d2952b47131138e108bd2999b1fe18b71f1a4c0b2684f168753db9563991)

set(DECODE_BENCH_FLASHINFER_FOUND OFF)
set(DECODE_BENCH_FLASHINFER_REASON "")
set(DECODE_BENCH_FLASHINFER_VERSION "")
set(DECODE_BENCH_FLASHINFER_SOURCE "")
set(DECODE_BENCH_FLASHINFER_UNPACKED_WHEEL "")  # the pinned wheel unpacked in the build tree, when used
set(DECODE_BENCH_FLASHINFER_CUTLASS_FOUND OFF)
set(DECODE_BENCH_FLASHINFER_CUTLASS_REASON "FlashInfer's headers were not found")
# What an unpacked wheel's stamp holds: the wheel's sha256 and the trees unpacked from it, so a tree
# unpacked before the CUTLASS headers were taken is unpacked again.
set(DECODE_BENCH_FLASHINFER_UNPACKED_TREES "include cccl cutlass")

# The package's data folder under root, in any of the accepted layouts, or "" (into out_var).
function(_flashinfer_data_dir root out_var)
  set(result "")
  foreach(candidate "${root}/flashinfer/data" "${root}/data" "${root}")
    if(EXISTS "${candidate}/include/flashinfer/attention/decode.cuh")
      set(result "${candidate}")
      break()
    endif()
  endforeach()
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

# Whether a data folder holds both the headers and the CCCL they are written against (FlashInfer's
# fastdiv.cuh needs cuda::fast_mod_div, which CUDA 13.0's bundled CCCL lacks).
function(_flashinfer_complete data_dir out_var)
  if(EXISTS "${data_dir}/cccl/libcudacxx/include/cuda/cmath")
    set(${out_var} ON PARENT_SCOPE)
  else()
    set(${out_var} OFF PARENT_SCOPE)
  endif()
endfunction()

# Version (from the package's _build_meta.py) and licence file (the wheel's dist-info) of a data folder.
function(_flashinfer_describe data_dir version_var license_var)
  get_filename_component(package_dir "${data_dir}" DIRECTORY)
  get_filename_component(site_dir "${package_dir}" DIRECTORY)
  set(version "unknown")
  if(EXISTS "${package_dir}/_build_meta.py")
    file(STRINGS "${package_dir}/_build_meta.py" line REGEX "^__version__ *= *\"[^\"]+\"")
    if(line MATCHES "\"([^\"]+)\"")
      set(version "${CMAKE_MATCH_1}")
    endif()
  endif()
  file(GLOB licenses "${site_dir}/flashinfer_python-${version}.dist-info/licenses/LICENSE"
                     "${site_dir}/flashinfer_python-*.dist-info/licenses/LICENSE"
                     "${package_dir}/LICENSE" "${site_dir}/LICENSE")
  set(license "")
  if(licenses)
    list(GET licenses 0 license)
  endif()
  set(${version_var} "${version}" PARENT_SCOPE)
  set(${license_var} "${license}" PARENT_SCOPE)
endfunction()

# The pinned wheel into the build tree, checked and unpacked (headers, CCCL, licence, version file).
function(_flashinfer_fetch_wheel out_root out_reason)
  set(dir "${CMAKE_BINARY_DIR}/_deps/flashinfer-wheel")
  set(wheel "${dir}/${DECODE_BENCH_FLASHINFER_WHEEL}")
  set(unpacked "${dir}/unpacked")
  set(stamp "${unpacked}/.decode-bench-sha256")
  if(EXISTS "${stamp}")
    file(READ "${stamp}" unpacked_sha)
    if(unpacked_sha STREQUAL "${DECODE_BENCH_FLASHINFER_WHEEL_SHA256} ${DECODE_BENCH_FLASHINFER_UNPACKED_TREES}")
      set(${out_root} "${unpacked}" PARENT_SCOPE)
      set(${out_reason} "" PARENT_SCOPE)
      return()
    endif()
  endif()
  file(MAKE_DIRECTORY "${dir}")
  if(NOT EXISTS "${wheel}")
    find_program(DECODE_BENCH_PYTHON3 NAMES python3)
    if(NOT DECODE_BENCH_PYTHON3)
      set(${out_reason} "no python3 to download ${DECODE_BENCH_FLASHINFER_WHEEL} with" PARENT_SCOPE)
      return()
    endif()
    # pip checks the hash itself (--require-hashes); no retries and a short socket timeout so that a
    # machine without network gives up at once, and the whole download has a time limit.
    file(WRITE "${dir}/requirements.txt"
         "flashinfer-python==${DECODE_BENCH_FLASHINFER_PIN} --hash=sha256:${DECODE_BENCH_FLASHINFER_WHEEL_SHA256}\n")
    message(STATUS "FlashInfer: downloading flashinfer-python ${DECODE_BENCH_FLASHINFER_PIN} (pip, at most ${DECODE_BENCH_FLASHINFER_DOWNLOAD_TIMEOUT} s)")
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env PIP_DISABLE_PIP_VERSION_CHECK=1
              "${DECODE_BENCH_PYTHON3}" -m pip download --no-deps --only-binary=:all: --require-hashes
              --retries 0 --timeout 15 --dest "${dir}" -r "${dir}/requirements.txt"
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
      TIMEOUT ${DECODE_BENCH_FLASHINFER_DOWNLOAD_TIMEOUT})
    if(NOT rc EQUAL 0 OR NOT EXISTS "${wheel}")
      string(REGEX MATCH "[^\n]*(ERROR|Error|error)[^\n]*" first_error "${err}")
      if(NOT first_error)
        set(first_error "${rc}")
      endif()
      set(${out_reason}
          "pip download flashinfer-python==${DECODE_BENCH_FLASHINFER_PIN} failed (no network? FLASHINFER_ROOT=<an unpacked wheel> builds it offline): ${first_error}"
          PARENT_SCOPE)
      return()
    endif()
  endif()
  file(SHA256 "${wheel}" sha)
  if(NOT sha STREQUAL DECODE_BENCH_FLASHINFER_WHEEL_SHA256)
    file(REMOVE "${wheel}")
    set(${out_reason} "${DECODE_BENCH_FLASHINFER_WHEEL} has sha256 ${sha}, not the pinned ${DECODE_BENCH_FLASHINFER_WHEEL_SHA256} (removed)" PARENT_SCOPE)
    return()
  endif()
  file(REMOVE_RECURSE "${unpacked}")
  # A wheel is a zip; only what the launchers compile against and the licence are unpacked.
  file(ARCHIVE_EXTRACT INPUT "${wheel}" DESTINATION "${unpacked}"
       PATTERNS "flashinfer/data/include/*" "flashinfer/data/cccl/libcudacxx/include/*"
                "flashinfer/data/cccl/cub/cub/*" "flashinfer/data/cccl/thrust/thrust/*"
                "flashinfer/data/cutlass/include/*"
                "flashinfer/_build_meta.py" "flashinfer_python-*.dist-info/licenses/*")
  file(WRITE "${stamp}" "${DECODE_BENCH_FLASHINFER_WHEEL_SHA256} ${DECODE_BENCH_FLASHINFER_UNPACKED_TREES}")
  set(${out_root} "${unpacked}" PARENT_SCOPE)
  set(${out_reason} "" PARENT_SCOPE)
endfunction()

if(DECODE_BENCH_FLASHINFER STREQUAL "OFF")
  set(DECODE_BENCH_FLASHINFER_REASON "DECODE_BENCH_FLASHINFER=OFF")
elseif(DECODE_BENCH_FLASHINFER STREQUAL "AUTO" AND DECODE_BENCH_PTX_ONLY)
  # The backend only runs on a GPU, and its 14 units are a sixth of a PTX-only build's compile
  # time (CI); scripts/gpu_check.sh builds and tests it. ON builds it here too.
  set(DECODE_BENCH_FLASHINFER_REASON "a PTX-only build (DECODE_BENCH_PTX_ONLY) leaves it out under DECODE_BENCH_FLASHINFER=AUTO; ON builds it")
elseif(NOT DECODE_BENCH_FLASHINFER MATCHES "^(AUTO|ON)$")
  message(FATAL_ERROR "DECODE_BENCH_FLASHINFER=${DECODE_BENCH_FLASHINFER}: expected AUTO, ON or OFF")
else()
  set(data_dir "")
  set(root "${FLASHINFER_ROOT}")
  if(NOT root AND DEFINED ENV{FLASHINFER_ROOT})
    set(root "$ENV{FLASHINFER_ROOT}")
  endif()
  if(root)
    _flashinfer_data_dir("${root}" data_dir)
    if(NOT data_dir)
      message(FATAL_ERROR "FLASHINFER_ROOT=${root}: no flashinfer/data/include/flashinfer/attention/decode.cuh, "
                          "data/include/... or include/... under it (an unpacked flashinfer-python wheel, its "
                          "flashinfer package folder or its data folder)")
    endif()
    _flashinfer_complete("${data_dir}" complete)
    if(NOT complete)
      message(FATAL_ERROR "FLASHINFER_ROOT=${root}: ${data_dir} has FlashInfer's headers but no "
                          "cccl/libcudacxx/include beside them (the CCCL they need; a flashinfer-python wheel has it)")
    endif()
    set(DECODE_BENCH_FLASHINFER_SOURCE "FLASHINFER_ROOT=${root}")
  endif()
  if(NOT data_dir)
    find_program(DECODE_BENCH_PYTHON3 NAMES python3)
    if(DECODE_BENCH_PYTHON3)
      execute_process(
        COMMAND "${DECODE_BENCH_PYTHON3}" -c
                "import importlib.util as u; s = u.find_spec('flashinfer'); print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')"
        RESULT_VARIABLE rc OUTPUT_VARIABLE package_dir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 30)
      if(rc EQUAL 0 AND package_dir)
        _flashinfer_data_dir("${package_dir}" data_dir)
        if(data_dir)
          _flashinfer_complete("${data_dir}" complete)
          if(complete)
            set(DECODE_BENCH_FLASHINFER_SOURCE "python package ${package_dir}")
          else()
            message(STATUS "FlashInfer: the python package at ${package_dir} has no data/cccl; trying the pinned wheel")
            set(data_dir "")
          endif()
        endif()
      endif()
    endif()
  endif()
  if(NOT data_dir)
    _flashinfer_fetch_wheel(wheel_root fetch_reason)
    if(fetch_reason)
      set(DECODE_BENCH_FLASHINFER_REASON "${fetch_reason}")
    else()
      _flashinfer_data_dir("${wheel_root}" data_dir)
      set(DECODE_BENCH_FLASHINFER_UNPACKED_WHEEL "${wheel_root}")
      set(DECODE_BENCH_FLASHINFER_SOURCE "pinned wheel ${DECODE_BENCH_FLASHINFER_WHEEL} (sha256 checked)")
    endif()
  endif()
  if(data_dir)
    _flashinfer_describe("${data_dir}" DECODE_BENCH_FLASHINFER_VERSION DECODE_BENCH_FLASHINFER_LICENSE)
    set(DECODE_BENCH_FLASHINFER_FOUND ON)
    if(EXISTS "${data_dir}/cutlass/include/cutlass/cutlass.h" AND EXISTS "${data_dir}/cutlass/include/cute/tensor.hpp")
      set(DECODE_BENCH_FLASHINFER_CUTLASS_FOUND ON)
      set(DECODE_BENCH_FLASHINFER_CUTLASS_REASON "")
    else()
      set(DECODE_BENCH_FLASHINFER_CUTLASS_REASON
          "${data_dir} has no cutlass/include (the CUTLASS 3 headers FlashInfer's Hopper MLA kernel is written on; a flashinfer-python wheel has them)")
    endif()
  endif()
endif()

if(DECODE_BENCH_FLASHINFER_FOUND)
  add_library(decode_bench_flashinfer_headers INTERFACE)
  add_library(decode_bench::flashinfer_headers ALIAS decode_bench_flashinfer_headers)
  # The wheel's CCCL before the toolkit's: FlashInfer's fastdiv.cuh uses cuda::fast_mod_div, which
  # CUDA 13.0's bundled CCCL lacks. The toolkit's CCCL can reach the command line as an -isystem
  # folder ahead of ours (CMake 4's CUDA::cudart names it), and -isystem folders are searched in
  # command-line order, so the wheel's CCCL goes in as -I: every -I folder is searched before any
  # -isystem one. FlashInfer's own headers stay SYSTEM (their warnings are FlashInfer's, not ours).
  target_include_directories(decode_bench_flashinfer_headers INTERFACE
    "${data_dir}/cccl/libcudacxx/include"
    "${data_dir}/cccl/cub"
    "${data_dir}/cccl/thrust")
  target_include_directories(decode_bench_flashinfer_headers SYSTEM INTERFACE "${data_dir}/include")
  target_link_libraries(decode_bench_flashinfer_headers INTERFACE CUDA::cudart)
  if(DECODE_BENCH_FLASHINFER_CUTLASS_FOUND)
    add_library(decode_bench_flashinfer_cutlass_headers INTERFACE)
    add_library(decode_bench::flashinfer_cutlass_headers ALIAS decode_bench_flashinfer_cutlass_headers)
    target_include_directories(decode_bench_flashinfer_cutlass_headers SYSTEM INTERFACE "${data_dir}/cutlass/include")
    target_link_libraries(decode_bench_flashinfer_cutlass_headers INTERFACE decode_bench_flashinfer_headers)
  endif()
  message(STATUS "FlashInfer ${DECODE_BENCH_FLASHINFER_VERSION}: ${DECODE_BENCH_FLASHINFER_SOURCE}; backend flashinfer built")
  if(NOT DECODE_BENCH_FLASHINFER_VERSION STREQUAL DECODE_BENCH_FLASHINFER_PIN)
    message(STATUS "FlashInfer: ${DECODE_BENCH_FLASHINFER_VERSION} is not the pinned ${DECODE_BENCH_FLASHINFER_PIN}: "
                   "its numbers are not comparable with runs of the pinned version")
  endif()
  if(DECODE_BENCH_FLASHINFER_LICENSE)
    # FlashInfer is Apache-2.0: its licence text goes wherever the binary that compiles it in goes.
    install(FILES "${DECODE_BENCH_FLASHINFER_LICENSE}" DESTINATION share/doc/decode_bench/licenses
            RENAME FlashInfer-LICENSE)
  else()
    message(WARNING "FlashInfer: no licence file found beside ${data_dir}; `cmake --install` will not install "
                    "FlashInfer's Apache-2.0 licence text (an unpacked wheel holds it in its dist-info folder)")
  endif()
else()
  if(DECODE_BENCH_FLASHINFER STREQUAL "ON")
    message(FATAL_ERROR "DECODE_BENCH_FLASHINFER=ON but FlashInfer's headers cannot be had: ${DECODE_BENCH_FLASHINFER_REASON}")
  endif()
  message(STATUS "FlashInfer: backend flashinfer not built: ${DECODE_BENCH_FLASHINFER_REASON}")
endif()
