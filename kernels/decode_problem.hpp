#pragma once
// One decode step over a batch of sequences, as every GPU kernel receives it. All pointers are
// device pointers. KV storage and layout come separately, as an accessor (kv_accessor.hpp).
//   q:        (num_seqs, H_q, D) fp32
//   o:        (num_seqs, H_q, D) fp32      written by the kernel
//   lse:      (num_seqs, H_q)    fp32      natural-log log-sum-exp of the scaled scores
//   seq_lens: (num_seqs)         int32     tokens of each sequence (0 allowed: empty state)
// With an attention variant (`variant` not plain: kernels/row_attention_variant.hpp) q, o and lse
// hold q_len rows a sequence, (num_seqs, q_len, H_q(, D)), query token i of sequence b at row
// b x q_len + i; only flash_decode computes them: on the tensor-core path, or for one query token at
// groups 1-2 on the CUDA-core twins (kernels/flash_decode_variant.hpp; decode_unsupported_reason).
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/row_attention_variant.hpp"

namespace decode_bench {

enum class DecodeKernel {
  baseline,      // seed paper's 3-kernel pipeline: scores, one-block softmax, one thread per output dim
  flash_decode,  // split-K: blocks stream chunks with an online softmax, then an (O, LSE) merge
};

constexpr std::string_view decode_kernel_name(DecodeKernel k) {
  return k == DecodeKernel::baseline ? "baseline" : "flash_decode";
}

struct DecodeProblem {
  DecodeShape shape;
  DType kv_dtype = DType::fp16;
  int num_seqs = 1;
  std::int64_t max_len = 0;  // max of seq_lens (known on the host; sizes grids and workspaces)
  const std::int32_t* seq_lens = nullptr;
  const float* q = nullptr;
  float* o = nullptr;
  float* lse = nullptr;
  // Optional host copy of seq_lens (num_seqs): with it, flash_decode plans a ragged batch as a
  // load-balanced work list (kernels/decode_balance.hpp); without, every sequence is split alike.
  const std::int32_t* host_seq_lens = nullptr;
  RowAttentionVariant variant{};  // plain: one query token, full attention, no cap, no sinks
};

// Head dims. Kernels are compiled for 64, 128 and 256 only (more would multiply the
// instantiations); head dim d runs on the smallest compiled one >= d with the dims past d masked:
// never read from memory (K/V chunks zero-filled, q dims zero), never written (o, partials). d must
// be a multiple of 16, one 16-byte chunk of FP8 (two of FP16/BF16, four of FP32), so every row is
// whole 16-byte chunks in every storage type and each chunk lies wholly inside d or past it.
constexpr int kHeadDimStep = 16;
constexpr int kMaxKernelHeadDim = 256;
constexpr bool head_dim_supported(int d) { return d >= kHeadDimStep && d <= kMaxKernelHeadDim && d % kHeadDimStep == 0; }
constexpr int compiled_head_dim(int d) { return d <= 64 ? 64 : d <= 128 ? 128 : 256; }
// "head_dim 72 is not supported (...)": the skip reason every planner and sweep reports.
inline std::string head_dim_unsupported_reason(int d) {
  return "head_dim " + std::to_string(d) +
         " is not supported (supported: multiples of 16 from 16 to 256; kernels are compiled for 64, 128 and 256, "
         "smaller head dims run on the next one up with the tail dims masked)";
}
// GQA group sizes with compiled CUDA-core kernels; others are reported as unsupported.
constexpr bool gqa_group_supported(int g) { return g == 1 || g == 2 || g == 4 || g == 8; }

}  // namespace decode_bench
