#pragma once
// The interface both KV-cache pools share (the seed paper's KVPool, sec. III-C, reworked):
// handles instead of raw slots, fork for shared prefixes, typed errors, stats, and accessors
// for kernels instead of a decode() method (pools manage memory; they never launch attention).
//
// Host data layouts taken by admit/append (the pool's dtype, host memory):
//   admit:        k, v: (H_kv, len, D)      append_token: k_row, v_row: (H_kv, D)
// Passing nullptr for both reserves the tokens without writing them (capacity counting).
//
// Typed accessors live on the concrete pools, because the accessor type is what differs:
//   ContiguousPool -> ContiguousKV<T>,  PagedPool -> PagedKV<T>  (kernels/kv_accessor.hpp)
// for one sequence (`accessor<T>(h)`, sequence index 0) or a batch (`batch<T>(handles)`).
// Pointers are device pointers on the device backend and host pointers on the host backend.
// Accessors stay valid until the sequences they show change (append, release); a paged batch
// view also until the next batch() call for other handles (the CSR buffers are reused).
// Device work (uploads, copy-on-write, the batch CSR gather) is ordered on stream(): a kernel on
// that stream may read an accessor at once; work on any other stream must wait for it first
// (backend().synchronize() or an event). make_device_backend(nullptr) creates its own
// non-blocking stream, which the legacy default stream does not wait for.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "kernels/dtype.hpp"
#include "pools/handle.hpp"
#include "pools/kv_layout.hpp"
#include "pools/memory_backend.hpp"
#include "pools/pool_error.hpp"
#include "pools/pool_stats.hpp"

namespace decode_bench {

// Why a pool's max_seq_len is unusable, or empty: lengths travel to kernels as int32.
inline std::string max_seq_len_invalid_reason(std::int64_t max_seq_len) {
  if (max_seq_len >= 1 && max_seq_len <= std::numeric_limits<std::int32_t>::max()) return {};
  return "max_seq_len must be in [1, 2^31) (got " + std::to_string(max_seq_len) + ")";
}

// `config` when its invalid_reason() is empty; otherwise PoolError(InvalidArgument) naming the pool.
template <class Config>
const Config& validated_config(const Config& config, const char* pool) {
  if (auto r = config.invalid_reason(); !r.empty()) throw PoolError(PoolErrorKind::InvalidArgument, pool + (": " + r));
  return config;
}

// A batch of sequences as a kernel takes it. Batch index i is sequence i of `kv`.
template <class KV>
struct BatchView {
  KV kv;
  const std::int32_t* seq_lens_device = nullptr;  // (num_seqs) int32, in pool memory
  int num_seqs = 0;
  std::vector<std::int32_t> lengths_host;          // (num_seqs), the same lengths on the host
  std::int64_t max_len = 0;                        // longest sequence in the batch
};

class KVPool {
 public:
  virtual ~KVPool() = default;

  virtual SequenceHandle admit(const void* k, const void* v, std::int64_t len) = 0;
  virtual void append_token(SequenceHandle h, const void* k_row, const void* v_row) = 0;
  // Appends n tokens without data (reservation, e.g. capacity counting): the same pool state as n
  // calls of append_token(h, nullptr, nullptr), checked up front as a whole and one length write.
  virtual void extend(SequenceHandle h, std::int64_t n) = 0;
  virtual void release(SequenceHandle h) = 0;
  // A new sequence with the parent's tokens. PagedPool shares the parent's pages (copy-on-write);
  // ContiguousPool has nothing to share and copies the parent's rows into a new slot.
  virtual SequenceHandle fork(SequenceHandle parent) = 0;

  virtual std::int64_t length(SequenceHandle h) const = 0;
  // Reads token t of a sequence back to the host: k_row, v_row: (H_kv, D) of the pool's dtype.
  virtual void read_token(SequenceHandle h, std::int64_t t, void* k_row, void* v_row) const = 0;
  virtual PoolStats stats() const = 0;
  virtual std::int64_t max_seq_len() const = 0;
  virtual const KVLayout& layout() const = 0;
  virtual MemoryBackend& backend() const = 0;
  cudaStream_t stream() const { return backend().stream(); }

  template <class T>
  SequenceHandle admit(std::span<const T> k, std::span<const T> v, std::int64_t len) {
    check_dtype<T>("admit");
    const std::size_t want = static_cast<std::size_t>(layout().heads_kv) * static_cast<std::size_t>(len < 0 ? 0 : len) *
                             layout().head_dim;
    if (k.size() != want || v.size() != want)
      throw PoolError(PoolErrorKind::InvalidArgument,
                      "admit: k and v must hold H_kv * len * D = " + std::to_string(want) + " elements (got " +
                          std::to_string(k.size()) + " and " + std::to_string(v.size()) + ")");
    return admit(static_cast<const void*>(k.data()), static_cast<const void*>(v.data()), len);
  }
  template <class T>
  void append_token(SequenceHandle h, std::span<const T> k_row, std::span<const T> v_row) {
    check_dtype<T>("append_token");
    const std::size_t want = static_cast<std::size_t>(layout().heads_kv) * layout().head_dim;
    if (k_row.size() != want || v_row.size() != want)
      throw PoolError(PoolErrorKind::InvalidArgument, "append_token: k_row and v_row must hold H_kv * D = " +
                                                          std::to_string(want) + " elements");
    append_token(h, static_cast<const void*>(k_row.data()), static_cast<const void*>(v_row.data()));
  }

 protected:
  template <class T>
  void check_dtype(const char* operation) const {
    if (dtype_of<T>::value != layout().dtype)
      throw PoolError(PoolErrorKind::DTypeMismatch, std::string(operation) + ": pool stores " +
                                                        std::string(dtype_name(layout().dtype)) + ", caller used " +
                                                        std::string(dtype_name(dtype_of<T>::value)));
  }
  void check_has_memory(const char* operation) const {
    if (!backend().has_memory())
      throw PoolError(PoolErrorKind::NoMemory,
                      std::string(operation) + ": the accounting backend has no memory to point into");
  }
  // Both data pointers or neither: one alone is a caller bug, not a reservation.
  static void check_data_pair(const void* k, const void* v, const char* operation) {
    if ((k == nullptr) != (v == nullptr))
      throw PoolError(PoolErrorKind::InvalidArgument,
                      std::string(operation) + ": pass both K and V data, or neither (reserve only)");
  }
  // The checks every admit makes before touching slots or pages.
  void check_admit(const void* k, const void* v, std::int64_t len) const {
    check_data_pair(k, v, "admit");
    if (len < 0) throw PoolError(PoolErrorKind::InvalidArgument, "admit: len must be >= 0 (got " + std::to_string(len) + ")");
    if (len > max_seq_len())
      throw PoolError(PoolErrorKind::SequenceTooLong,
                      "admit: len " + std::to_string(len) + " exceeds max_seq_len " + std::to_string(max_seq_len()));
  }
};

}  // namespace decode_bench
