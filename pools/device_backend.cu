// Device backend: arenas from the harness's device pool (harness/device_memory.hpp),
// cudaMemcpy2DAsync on one stream (small uploads and metadata words staged in page-locked
// memory, pools/staging_rotation.hpp), and the block-table gather kernel that assembles a batch's CSR
// on the device (no host round trip of the tables). While collecting into a step's upload block
// (MemoryBackend::collect_into), every upload, word list, device copy and gather is recorded there
// instead, for the block's one copy and one launch (kernels/step_uploads.hpp).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/device_memory.hpp"
#include "kernels/step_upload_block.hpp"
#include "pools/memory_backend.hpp"
#include "pools/pool_error.hpp"
#include "pools/staging_rotation.hpp"

namespace decode_bench {
namespace {

// One block per sequence of the batch; its threads copy that sequence's block-table row.
//   tables: (max_seqs, row_stride)   out_pages: (indptr[n])   out_lens: (n)
__global__ void gather_block_tables_kernel(const std::int32_t* __restrict__ tables, std::int64_t row_stride,
                                           const std::int32_t* __restrict__ slot_lengths,
                                           const std::int32_t* __restrict__ slots,
                                           const std::int32_t* __restrict__ indptr, std::int32_t* __restrict__ out_pages,
                                           std::int32_t* __restrict__ out_lens) {
  const int i = blockIdx.x;
  const std::int32_t slot = slots[i];
  const std::int32_t begin = indptr[i], count = indptr[i + 1] - begin;
  const std::int32_t* row = tables + slot * row_stride;
  for (std::int32_t j = threadIdx.x; j < count; j += blockDim.x) out_pages[begin + j] = row[j];
  if (threadIdx.x == 0) out_lens[i] = slot_lengths[slot];
}

__global__ void write_words_kernel(const WordWrite* __restrict__ words, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) *words[i].dst = words[i].value;
}

class DeviceBackend final : public MemoryBackend {
 public:
  explicit DeviceBackend(cudaStream_t stream) : stream_(stream), owns_stream_(stream == nullptr) {
    if (owns_stream_) DB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~DeviceBackend() override {
    // Every staged copy has left its pinned buffer before the buffer goes (the device free waits
    // for the scatter launch that reads the device list).
    for (Slot& s : slots_) {
      if (s.copied) {
        cudaEventSynchronize(s.copied);
        cudaEventDestroy(s.copied);
      }
      if (s.host) cudaFreeHost(s.host);
    }
    deallocate(staged_words_);
    if (owns_stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }

  BackendKind kind() const override { return BackendKind::device; }
  cudaStream_t stream() const override { return stream_; }

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    const cudaError_t status = device_malloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      std::size_t free_bytes = 0, total_bytes = 0;
      cudaMemGetInfo(&free_bytes, &total_bytes);
      throw PoolError(PoolErrorKind::OutOfDeviceMemory,
                      "device allocation of " + std::to_string(bytes) + " bytes failed (" + std::to_string(free_bytes) +
                          " of " + std::to_string(total_bytes) + " bytes free)");
    }
    DB_CUDA_CHECK(status);
    return p;
  }
  void deallocate(void* p) noexcept override {
    device_free(p);
  }

  // One row is a plain copy (cudaMemcpy2D would insist on pitch >= width even then).
  void copy_rows(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h,
                 cudaMemcpyKind kind) {
    if (w == 0 || h == 0) return;
    if (h == 1) DB_CUDA_CHECK(cudaMemcpyAsync(dst, src, w, kind, stream_));
    else DB_CUDA_CHECK(cudaMemcpy2DAsync(dst, dp, src, sp, w, h, kind, stream_));
  }

  // One row of at most kStagedUploadBytes (metadata: a batch's slots and indptr, a block-table
  // row) goes through the pinned staging slots, an asynchronous copy that never waits for the
  // stream; larger and pitched uploads (K/V rows of an admit) copy from the caller's memory.
  void upload(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    if (collect_) {
      for (std::size_t r = 0; w > 0 && r < h; ++r) {
        void* row = collect_->write(static_cast<std::byte*>(dst) + r * dp, w);
        std::memcpy(row, static_cast<const std::byte*>(src) + r * sp, w);
      }
      return;
    }
    if (h == 1 && w > 0 && w <= kStagedUploadBytes) {
      Slot& s = take_slot(w);
      std::memcpy(s.host, src, w);
      DB_CUDA_CHECK(cudaMemcpyAsync(dst, s.host, w, cudaMemcpyHostToDevice, stream_));
      copied(s);
      return;
    }
    copy_rows(dst, dp, src, sp, w, h, cudaMemcpyHostToDevice);
  }
  void copy(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    if (collect_) {
      for (std::size_t r = 0; w > 0 && r < h; ++r)
        collect_->device_copy(static_cast<std::byte*>(dst) + r * dp, static_cast<const std::byte*>(src) + r * sp, w);
      return;
    }
    copy_rows(dst, dp, src, sp, w, h, cudaMemcpyDeviceToDevice);
  }
  void download(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    refuse_while_collecting("download");
    copy_rows(dst, dp, src, sp, w, h, cudaMemcpyDeviceToHost);
    DB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // All words through one pinned staging slot: one async copy and one scatter launch.
  void write_words(std::span<const WordWrite> words) override {
    if (words.empty()) return;
    if (collect_) {
      collected_words_.resize(words.size());
      for (std::size_t i = 0; i < words.size(); ++i) collected_words_[i] = {words[i].dst, words[i].value};
      collect_->words(collected_words_);
      return;
    }
    const std::size_t bytes = words.size() * sizeof(WordWrite);
    Slot& s = take_slot(bytes);
    if (words.size() > device_capacity_) {
      // The device list grows (rarely: a larger batch than any before); the free waits for the
      // scatter launches that read the old one (harness/device_memory.hpp).
      const std::size_t want = std::max<std::size_t>(words.size(), 2 * device_capacity_);
      deallocate(staged_words_);
      staged_words_ = nullptr;
      device_capacity_ = 0;
      staged_words_ = static_cast<WordWrite*>(allocate(want * sizeof(WordWrite)));
      device_capacity_ = want;
    }
    std::copy(words.begin(), words.end(), reinterpret_cast<WordWrite*>(s.host));
    const int n = static_cast<int>(words.size());
    DB_CUDA_CHECK(cudaMemcpyAsync(staged_words_, s.host, bytes, cudaMemcpyHostToDevice, stream_));
    copied(s);
    write_words_kernel<<<std::min(1024, (n + 255) / 256), 256, 0, stream_>>>(staged_words_, n);
    DB_CUDA_CHECK(cudaGetLastError());
  }

  void gather_block_tables(const std::int32_t* tables, std::int64_t row_stride, const std::int32_t* slot_lengths,
                           const std::int32_t* slots, const std::int32_t* indptr, int n, std::int32_t* out_pages,
                           std::int32_t* out_lens) override {
    if (n == 0) return;
    if (collect_) {
      collect_->gather({tables, row_stride, slot_lengths, slots, indptr, out_pages, out_lens}, n);
      return;
    }
    gather_block_tables_kernel<<<n, 128, 0, stream_>>>(tables, row_stride, slot_lengths, slots, indptr, out_pages,
                                                       out_lens);
    DB_CUDA_CHECK(cudaGetLastError());
  }

  void synchronize() override {
    refuse_while_collecting("synchronize");
    DB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void collect_into(StepUploadBlock* block) override { collect_ = block; }

 private:
  // A pinned staging buffer and the event recorded after the copy out of it.
  struct Slot {
    std::byte* host = nullptr;
    std::size_t capacity = 0;
    cudaEvent_t copied = nullptr;
  };
  static constexpr int kStagingSlots = 4;     // to begin with
  static constexpr int kMaxStagingSlots = 256;  // the ring grows to this, then waits
  static constexpr std::size_t kStagedUploadBytes = std::size_t{64} << 10;

  // The slot in turn, at least `bytes` large, its last copy done. Where that copy is still queued
  // (behind a decode in flight) a new slot takes its place in the ring instead of a wait, up to
  // kMaxStagingSlots; then the wait.
  Slot& take_slot(std::size_t bytes) {
    int i = rotation_.next();
    if (rotation_.in_flight(i)) {
      Slot& s = slots_[static_cast<std::size_t>(i)];
      const cudaError_t q = cudaEventQuery(s.copied);
      if (q == cudaSuccess) {
        rotation_.retired(i);
      } else if (q == cudaErrorNotReady && rotation_.slots() < kMaxStagingSlots) {
        i = rotation_.insert();
        slots_.insert(slots_.begin() + i, Slot{});
      } else {
        if (q != cudaErrorNotReady) DB_CUDA_CHECK(q);
        DB_CUDA_CHECK(cudaEventSynchronize(s.copied));
        rotation_.retired(i);
      }
    }
    Slot& s = slots_[static_cast<std::size_t>(i)];
    if (!s.copied) DB_CUDA_CHECK(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
    if (s.capacity < bytes) {
      // Grows while a loop warms up; the slot's copy is done, so its old buffer may go.
      const std::size_t want = std::max<std::size_t>({bytes, 2 * s.capacity, 4096});
      if (s.host) DB_CUDA_CHECK(cudaFreeHost(s.host));
      s.host = nullptr;
      s.capacity = 0;
      DB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.host), want));
      s.capacity = want;
    }
    rotation_.fill(i);
    return s;
  }
  void copied(Slot& s) { DB_CUDA_CHECK(cudaEventRecord(s.copied, stream_)); }
  void refuse_while_collecting(const char* operation) const {
    if (collect_)
      throw std::logic_error(std::string("device backend: ") + operation +
                             " while uploads are collected into a step block (they are not on the stream yet)");
  }

  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  StagingRotation rotation_{kStagingSlots};
  std::vector<Slot> slots_ = std::vector<Slot>(kStagingSlots);
  WordWrite* staged_words_ = nullptr;  // device, device_capacity_ words
  std::size_t device_capacity_ = 0;
  StepUploadBlock* collect_ = nullptr;   // collecting into this block, or nullptr
  std::vector<StepWord> collected_words_;  // a word list as the block takes it (kept: every step)
};

}  // namespace

std::unique_ptr<MemoryBackend> make_device_backend(cudaStream_t stream) {
  return std::make_unique<DeviceBackend>(stream);
}

}  // namespace decode_bench
