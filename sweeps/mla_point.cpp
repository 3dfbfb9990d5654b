#include "sweeps/mla_point.hpp"

#include <algorithm>

#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_decode_wgmma.hpp"
#include "sweeps/layer_step.hpp"

namespace decode_bench::sweeps {

MlaPoint parse_mla_point(const nlohmann::json& p) {
  MlaPoint m;
  m.decode = parse_decode_point(p);
  m.shape.heads_q = p.value("heads_q", 1);
  m.shape.kv_lora_rank = p.value("kv_lora_rank", 512);
  m.shape.rope_dim = p.value("rope_dim", 64);
  m.shape.q_len = m.decode.variant.q_len;
  m.shape.softmax_scale = deepseek_softmax_scale(m.shape.rope_dim);
  m.decode.shape = {m.shape.heads_q, 1, m.shape.key_dim()};
  return m;
}

std::optional<std::string> mla_request_unsupported(const nlohmann::json& p) {
  if (auto why = decode_lengths_unsupported(p)) return why;
  if (p.value("end_to_end", false))
    return std::string("end_to_end with attention mla: the E2E copies are of MHA K/V slabs (no latent-cache upload path)");
  if (p.value("layers", 1) > 1)
    return "layers " + std::to_string(p.value("layers", 1)) + " with attention mla: an MLA point builds one layer's "
           "latent cache only";
  return std::nullopt;
}

AttentionProblem describe_mla_point(KernelKind kernel, const nlohmann::json& params) {
  const MlaPoint m = parse_mla_point(params);
  const DecodePoint& d = m.decode;
  AttentionProblem p;
  p.kernel = kernel;
  p.shape = d.shape;
  p.mla = m.shape;
  p.batch = static_cast<int>(d.lengths.size());
  p.kv_dtype = d.dtype;
  p.layout = d.paged ? KvLayoutKind::paged : KvLayoutKind::contiguous;
  p.host_seq_lens = d.lengths;
  p.max_len = d.max_len();
  p.contiguous.head_dim = m.shape.key_dim();
  if (d.paged) {
    p.paged.page_size = d.page_size;
    p.paged.heads_kv = 1;
    p.paged.head_dim = m.shape.key_dim();
    p.host_indptr.assign(1, 0);
    for (const std::int32_t len : d.lengths) {
      p.host_indptr.push_back(p.host_indptr.back() + (len + d.page_size - 1) / d.page_size);
      p.host_last_page_len.push_back(len == 0 ? 0 : (len - 1) % d.page_size + 1);
    }
  }
  p.splits = d.blocks;
  p.variant.q_len = m.shape.q_len;
  return p;
}

std::uint64_t estimate_mla_device_bytes(const nlohmann::json& params) {
  const MlaPoint m = parse_mla_point(params);
  const DecodePoint& d = m.decode;
  const std::uint64_t row = mla_latent_token_bytes(m.shape, d.dtype);
  const std::uint64_t batch = d.lengths.size();
  std::uint64_t rows_stored = 0, table = 0;
  if (d.paged) {
    std::uint64_t pages = 0;
    for (const std::int32_t len : d.lengths) pages += (static_cast<std::uint64_t>(len) + d.page_size - 1) / d.page_size;
    rows_stored = pages * d.page_size;
    table = 4 * (pages + 2 * batch + 1);  // page indices, indptr, last-page lengths
  } else {
    rows_stored = batch * static_cast<std::uint64_t>(std::max<std::int64_t>(d.max_len(), 1));
  }
  const std::uint64_t q_rows = batch * static_cast<std::uint64_t>(m.shape.rows());
  // FP32 q, o and lse (generated and verified), and the 16-bit q and o every MLA backend reads and
  // writes (its io_dtype: decode-bench's MlaIo, FlashInfer's the latents').
  const std::uint64_t q_o = q_rows * (m.shape.key_dim() + m.shape.value_dim() + 1) * 4 +
                            q_rows * (m.shape.key_dim() + m.shape.value_dim()) * 2;
  // The device picks the plan (plan_mla_decode_for_device): the largest partials of the mma.sync
  // kernels' plan (narrow or 64-row, by rows) and the wgmma kernel's in either tiling
  // (DECODE_BENCH_MLA_TILE picks one).
  std::uint64_t workspace =
      plan_mla_decode(m.shape, d.dtype, static_cast<int>(batch), d.max_len(), 256, d.blocks).workspace_bytes;
  for (const int tile : kMlaWgmmaTiles)
    workspace = std::max<std::uint64_t>(
        workspace, plan_mla_decode_wgmma(m.shape, d.dtype, static_cast<int>(batch), d.max_len(), 256, d.blocks, tile)
                       .workspace_bytes);
  return rows_stored * row + table + q_o + workspace + 4 * batch;  // + seq_lens
}

}  // namespace decode_bench::sweeps
