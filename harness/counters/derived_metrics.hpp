#pragma once
// From raw counter values (one profiled pass of one point) plus the point's byte/FLOP model to
// the "counters" object of a results point: bytes per memory level, FLOPs, achieved GB/s and
// TFLOP/s, arithmetic intensity per level, measured/model bytes. Pure host code: no CUDA.
//
// FLOP conventions (docs/counters.md):
//   fp32_flops = fadd + fmul + 2 * ffma
//   fp16_flops = kFp16LanesPerInstruction * (hadd + hmul + 2 * hfma)
// The h* counters count executed instructions per thread, and one HADD2/HMUL2/HFMA2 works on a
// half2 (2 lanes). decode-bench assumes every FP16 instruction is the paired form (the compiler
// emits it for half2 code), so it multiplies by 2; Nsight Compute's roofline does not (1 lane),
// so "fp16_flops_one_lane" is recorded too. Scalar HADD/HFMA make the ×2 an overcount.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace decode_bench::counters {

inline constexpr double kFp16LanesPerInstruction = 2.0;

// raw: Perfworks metric name -> value (as from RangeProfiler::profile()["raw"]).
// model: the point's "model" object ({bytes, flops, ...}); may be empty/null, then the
//        measured/model ratios are left out.
// Requires gpu__time_duration.sum > 0; throws std::invalid_argument naming the metric when it is
// missing, or when any value is negative or not finite. Quantities whose inputs are missing are
// left out (a user may collect a subset); a level with zero bytes gets intensity null.
// The result carries "available": true.
nlohmann::json derive_counters(const std::map<std::string, double>& raw, const nlohmann::json& model);

// The "counters" object of a point measured without counters: {"available": false, "reason": ...}
// (reason: RangeProfiler::create's sentence, or a CounterError's message).
nlohmann::json counters_unavailable(const std::string& reason);

}  // namespace decode_bench::counters
