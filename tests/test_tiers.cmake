# The test tiers as ctest labels (docs/testing.md):
#   host          needs no GPU: every gtest suite whose name does not end in Gpu, and every other
#                 test of this directory (plots.*, scripts.*, cmake.*, cluster.*)
#   gpu           every GPU test: the gtest suites whose name ends in Gpu (death-test suites:
#                 GpuDeathTest); their tests call DB_REQUIRE_GPU() and are reported as skipped
#                 where no GPU is
#   gpu_quick     the part of gpu listed in DECODE_BENCH_GPU_QUICK: every kernel family, storage
#                 type and layout, in about a minute of test time on an H100
#   gpu_sanitize  the part of gpu_quick listed in DECODE_BENCH_GPU_SANITIZE: the kernel tests
#                 scripts/gpu_check.sh runs under compute-sanitizer memcheck and racecheck
# A gtest test's tier follows from its suite's name, so a new GPU suite lands in gpu with no edit
# here; ctest cmake.test_tiers checks the labels, the lists, and that every test calling
# DB_REQUIRE_GPU() is in such a suite. Names are gtest's full names (gtest filter patterns).

# The quick tier beyond the sanitizer's tests: planners, the references, the CUDA-core short and
# work-list tilings, every head dim on the CUDA cores, FP8 decode, wgmma's automatic choice,
# shared-prefix points through the sweep runners, the pools, timing, counters and the device hooks.
set(DECODE_BENCH_GPU_QUICK
  PlannerTuningGpu.*
  GpuReferenceGpu.*
  TanhApproxGpu.*
  DecodeKernelsGpu.UnsupportedConfigurationsAreRefused
  DecodeKernelsGpu.HeadsPerBlockThatDoNotTileAreRefused
  DecodeShortBatchGpu.ShortTilingAtEveryHeadDimAndStorageType
  DecodeRaggedBatchGpu.LongAndShortSequencesOnBothTilings
  Fp8DecodeGpu.HeadDimsGroupsAndLayouts
  RowAttentionRaggedGpu.BadHostLengthsAreRefused
  RowAttentionRaggedGpu.UniformBatchesKeepTheUniformPlan
  RowAttentionWgmmaGpu.AutomaticChoice
  Cases/SharedPrefixGpu.MatchesTheReferenceOverWholeSequences/prefix_not_page_multiple
  Cases/SharedPrefixGpu.MatchesTheReferenceOverWholeSequences/bf16_two_levels_one_stream
  SharedPrefixFillGpu.DeviceFillEqualsHostFill
  SharedPrefixRunnerGpu.BothKernelsRunAndVerifyAPoint
  MergeLevelStatesGpu.RefusesDepthsOutsideZeroToFour
  PoolGpu.PagedRoundTripThroughDeviceTables
  PoolGpu.ContiguousRoundTrip
  TraceGpu.ShortTracesVerifyAndKeepTheirAccountsOnBothPools
  PoolGpu.DeviceAllocationFailureIsATypedError
  DeviceMemoryGpu.*
  TimingGpu.EventsMeasureAKnownSpinWithinFivePercent
  TimingGpu.LaunchErrorFailsThePointButNotTheRun
  TimingGpu.ATimeLimitCutsTheRepetitionsShort
  FlashInferBackendGpu.EveryLayoutAndKvTypeVerifiesThroughThePipeline
  FlashInferTcBackendGpu.CascadeVerifiesForBothBackends
  FlashInferMlaBackendGpu.ASplitLongSequenceMergesInsideTheKernel
  TimingGpuDeathTest.IllegalAddressIsStickyAndReported
  CountersGpu.SelftestKernelsMatchClosedForms
  SweepGpu.DeviceHooksDescribeTheGpu
  ProvenanceGpu.GpuStateHasCurrentClocksAndTemperatureFromNvml
  BlockTimelineGpu.EveryBlockOfRealLaunchesIsRecordedInOrder
  MlaSweepGpu.BatchDecodeWithForcedSplits)
# Small kernel tests, also in the quick tier: the 3-kernel baseline and split-K flash-decode on
# CUDA cores (FP32 / FP16 / BF16, pages of 1 to 512 tokens, up to 5000 splits) and its variant twins, the tensor-core
# row attention (narrow, wide, FP8) and its attention variants, the wgmma kernel and its cluster merge, the short-sequence kernel and its variants, both windowed families on a pool released behind the
# window (a read of a released entry, page -1, is out of bounds), the shared-prefix composition with its
# level merges, masked head-dim tails and the deep tiling, MLA decode (every kernel, the split merges). A few small cases each: the sanitizers slow kernels down
# 10-100x, and each tool's run over all of them should stay within a couple of minutes.
set(DECODE_BENCH_GPU_SANITIZE
  DecodeKernelsGpu.BatchWithEmptyAndShortSequences
  DecodeKernelsGpu.BlockCounts
  DecodeKernelsGpu.PageSizesShuffled
  RowAttentionGpu.WideTilingSmall
  RowAttentionGpu.Fp8SplitsAndPages
  RowAttentionGpu.IdentityRowsAndNoItems
  RowAttentionWgmmaGpu.Small
  RowAttentionStreamGpu.Small
  RowAttentionMqaGpu.ClusterMergeSmall
  RowAttentionMqaGpu.Tiles128Small
  RowAttentionMqaGpu.HostLengthTwinSmall
  DecodeVariantsGpu.Small
  DecodeVariantsWgmmaGpu.Small
  DecodeVariantsCudaCoreGpu.Small
  DecodeVariantsFp8Gpu.Small
  Cases/SharedPrefixGpu.MatchesTheReferenceOverWholeSequences/two_levels_unequal_groups
  Cases/SharedPrefixGpu.MatchesTheReferenceOverWholeSequences/fp8_e4m3_two_levels_gqa
  Cases/SharedPrefixGpu.MatchesTheReferenceOverWholeSequences/soft_cap_5_window_sinks_two_levels
  MergeLevelStatesGpu.MatchesTheFloat64FoldAtEveryDepthAndHeadDim
  HeadDimsGpu.OutputsEndAtTheHeadDim
  HeadDimsGpu.DeepTilingSmall
  HeadDimsGpu.ShortTilingAtGroupTwoSmall
  MlaDecodeGpu.PageSizesOrdersAndStorage
  MlaDecodeGpu.EmptySequenceAndBothStorageTypes
  MlaDecodeGpu.NarrowStorageTypesAndSplits
  MlaDecodeWgmmaGpu.Small
  MlaMergeSplitsGpu.FoldsSplitMajorPartialsAsFloat64Does
  MlaDecodeWgmmaGpu.DependentAndStreamOrderedMerge
  MlaDecodeWgmmaGpu.FusedMergeAtFewSplits
  MlaDecodeWgmmaGpu.ClusterMergeAtFewSplits
  MlaDecodeWgmmaGpu.SpreadMergeAtFewSplits
  ShortDecodeGpu.Small
  ShortDecodeLongGpu.Small
  ShortDecodeVariantGpu.Small
  WindowReleaseGpu.Small)
list(APPEND DECODE_BENCH_GPU_QUICK ${DECODE_BENCH_GPU_SANITIZE})

# The timing tests measure kernels of known duration: another test's kernels on the same GPU
# (ctest -j) would stretch them, so they run alone. The counter tests need the GPU's counters to
# themselves: a sweep profiling beside them makes CUPTI answer CUPTI_ERROR_HARDWARE_BUSY (it did,
# under ctest -j3 on an H100), so they run alone too. The device-memory tests size their requests
# from the driver's free memory and then allocate: another test allocating in between made a
# request that must fit fail (ctest -j4 on an H100, e46bb88), so they run alone as well. So does
# the pool's allocation-failure test, which asks for twice the device's memory: while it ran, a
# trace test beside it failed an allocation of a few bytes (ctest -j4 on an H100, e035a5b).
set(gpu_suites "*Gpu.*:*GpuDeathTest.*")
set(serial_suites "TimingGpu.*:TimingGpuDeathTest.*:CountersGpu.*:DeviceMemoryGpu.*:PoolGpu.DeviceAllocationFailureIsATypedError")
set(serial_regex "^(TimingGpu|CountersGpu|DeviceMemoryGpu|PoolGpu[.]DeviceAllocationFailureIsATypedError)")
set(quick_serial ${DECODE_BENCH_GPU_QUICK})
list(FILTER quick_serial INCLUDE REGEX "${serial_regex}")
set(quick_parallel ${DECODE_BENCH_GPU_QUICK})
list(FILTER quick_parallel EXCLUDE REGEX "${serial_regex}")
list(REMOVE_ITEM quick_parallel ${DECODE_BENCH_GPU_SANITIZE})
foreach(name IN LISTS DECODE_BENCH_GPU_SANITIZE)
  if(name MATCHES "^TimingGpu")
    message(FATAL_ERROR "DECODE_BENCH_GPU_SANITIZE: ${name} is a timing test (run alone, never under a sanitizer)")
  endif()
endforeach()
list(JOIN DECODE_BENCH_GPU_QUICK ":" quick)
list(JOIN DECODE_BENCH_GPU_SANITIZE ":" sanitize)
list(JOIN quick_parallel ":" quick_parallel)
list(JOIN quick_serial ":" quick_serial)

# One discovery per (tier, serial) cell, with disjoint filters so that each test is added once.
# ctest appends LABELS given twice (a value with ';' would not survive gtest_discover_tests).
set(discover decode_tests DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES)
gtest_discover_tests(${discover} TEST_FILTER "-${gpu_suites}" PROPERTIES LABELS host)
gtest_discover_tests(${discover} TEST_FILTER "${sanitize}"
                     PROPERTIES LABELS gpu LABELS gpu_quick LABELS gpu_sanitize)
gtest_discover_tests(${discover} TEST_FILTER "${quick_parallel}" PROPERTIES LABELS gpu LABELS gpu_quick)
if(quick_serial)  # an empty filter would match every test
  gtest_discover_tests(${discover} TEST_FILTER "${quick_serial}"
                       PROPERTIES LABELS gpu LABELS gpu_quick RUN_SERIAL TRUE)
endif()
gtest_discover_tests(${discover} TEST_FILTER "${gpu_suites}-${quick}:${serial_suites}" PROPERTIES LABELS gpu)
gtest_discover_tests(${discover} TEST_FILTER "${serial_suites}-${quick}" PROPERTIES LABELS gpu RUN_SERIAL TRUE)

# Every other test of this directory needs no GPU: labelled host once the whole file is read, so
# a test added anywhere below lands in a tier too.
function(decode_bench_label_host_tests)
  get_property(tests DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} LABELS labels)
    if(NOT labels)
      set_tests_properties(${test} PROPERTIES LABELS host)
    endif()
  endforeach()
endfunction()
cmake_language(DEFER CALL decode_bench_label_host_tests)

# The labels above, checked against the discovered tests and the test sources.
add_test(NAME cmake.test_tiers
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/test_tiers_check.py ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
          ${CMAKE_CTEST_COMMAND} "${quick}" "${sanitize}")
# scripts/flush_method_table.py: the pairing in closed form and its refusal of a file of the other mode.
add_test(NAME scripts.flush_method_table
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/flush_method_table_check.py ${CMAKE_SOURCE_DIR}
          ${CMAKE_BINARY_DIR}/flush_method_table_check)
# scripts/gpu_run_prelude.sh's commit stamp: a second line that does not say dirty is refused.
add_test(NAME scripts.gpu_run_prelude
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_run_prelude_check.sh ${CMAKE_SOURCE_DIR}
          ${CMAKE_BINARY_DIR}/gpu_run_prelude_check)
# scripts/gpu_check.sh's argument checks and its per-tier summary (scripts/ctest_summary.py).
add_test(NAME scripts.gpu_check
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_check_check.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/gpu_check_check)
