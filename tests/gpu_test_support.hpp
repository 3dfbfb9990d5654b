#pragma once
// GPU tests start with DB_REQUIRE_GPU(): on a machine without a usable CUDA device the test is
// reported as skipped with the reason (never passed vacuously).
#include <gtest/gtest.h>

#include "harness/device_query.hpp"

#define DB_REQUIRE_GPU()                                                              \
  do {                                                                                \
    if (const auto db_reason_ = ::decode_bench::device_unavailable_reason(0))         \
      GTEST_SKIP() << "GPU test skipped: " << *db_reason_;                            \
  } while (0)
