#pragma once
// CUPTI failures as sentences: which call failed, CUPTI's own message, and the fix when one is
// known (privileges, another profiler attached, MIG, virtualised GPUs). The hint is what a user
// reads in a results file when a run fell back to timing only.
#include <stdexcept>
#include <string>
#include <string_view>

namespace decode_bench::counters {

class CounterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The fix for a CUptiResult code (as int, so this header needs no CUPTI include); empty when no
// specific fix is known.
std::string hint_for_cupti_result(int cupti_result);

// "<call> failed: <CUPTI message> (CUPTI_ERROR_...). Fix: <hint>"
std::string describe_cupti_result(int cupti_result, std::string_view call);

// Throws CounterError(describe_cupti_result(...)) unless cupti_result is CUPTI_SUCCESS (0).
void throw_if_cupti_failed(int cupti_result, std::string_view call);

}  // namespace decode_bench::counters
