#pragma once
// GPU tests start with DB_REQUIRE_GPU(): on a machine without a usable CUDA device the test is
// reported as skipped with the reason (never passed vacuously). Tests of the warpgroup-MMA row
// kernel start with DB_REQUIRE_WGMMA(): skipped too where GPU 0 does not run it (compute
// capability 9.0 and a build with sm_90a).
#include <gtest/gtest.h>

#include "harness/device_query.hpp"
#include "kernels/row_attention_wgmma.hpp"

#define DB_REQUIRE_GPU()                                                              \
  do {                                                                                \
    if (const auto db_reason_ = ::decode_bench::device_unavailable_reason(0))         \
      GTEST_SKIP() << "GPU test skipped: " << *db_reason_;                            \
  } while (0)

#define DB_REQUIRE_WGMMA()                                                                      \
  do {                                                                                          \
    DB_REQUIRE_GPU();                                                                           \
    if (!::decode_bench::wgmma_row_kernel_runs_on(0))                                           \
      GTEST_SKIP() << "wgmma test skipped: GPU 0 is not compute capability 9.0 or this build "  \
                      "has no sm_90a kernel";                                                   \
  } while (0)
