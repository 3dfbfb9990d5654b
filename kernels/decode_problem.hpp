#pragma once
// One decode step over a batch of sequences, as every GPU kernel receives it. All pointers are
// device pointers. KV storage and layout come separately, as an accessor (kv_accessor.hpp).
//   q:        (num_seqs, H_q, D) fp32
//   o:        (num_seqs, H_q, D) fp32      written by the kernel
//   lse:      (num_seqs, H_q)    fp32      natural-log log-sum-exp of the scaled scores
//   seq_lens: (num_seqs)         int32     tokens of each sequence (0 allowed: empty state)
#include <cstdint>
#include <string_view>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"

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
};

// Head dims and GQA group sizes with compiled kernels; others are reported as unsupported.
constexpr bool head_dim_supported(int d) { return d == 64 || d == 128 || d == 256; }
constexpr bool gqa_group_supported(int g) { return g == 1 || g == 2 || g == 4 || g == 8; }

}  // namespace decode_bench
