// Device backend: arenas from the harness's device pool (harness/device_memory.hpp),
// cudaMemcpy2DAsync on one stream, and the block-table gather kernel that assembles a batch's CSR
// on the device (no host round trip of the tables).
#include <algorithm>
#include <string>

#include "harness/cuda_check.hpp"
#include "harness/device_memory.hpp"
#include "pools/memory_backend.hpp"
#include "pools/pool_error.hpp"

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
    // The last staged copy has left the pinned buffer before it goes (cudaFree waits for the
    // scatter launch that reads the device list).
    if (staged_) {
      cudaEventSynchronize(staged_);
      cudaEventDestroy(staged_);
    }
    if (staging_) cudaFreeHost(staging_);
    if (staged_words_) cudaFree(staged_words_);
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

  void upload(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    copy_rows(dst, dp, src, sp, w, h, cudaMemcpyHostToDevice);
  }
  void copy(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    copy_rows(dst, dp, src, sp, w, h, cudaMemcpyDeviceToDevice);
  }
  void download(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    copy_rows(dst, dp, src, sp, w, h, cudaMemcpyDeviceToHost);
    DB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // All words through one pinned staging buffer: one async copy and one scatter launch. The
  // staging buffer is reused once the previous batch's copy has left it (its event).
  void write_words(std::span<const WordWrite> words) override {
    if (words.empty()) return;
    if (staged_) DB_CUDA_CHECK(cudaEventSynchronize(staged_));
    else DB_CUDA_CHECK(cudaEventCreateWithFlags(&staged_, cudaEventDisableTiming));
    if (words.size() > capacity_) {
      const std::size_t want = std::max<std::size_t>(words.size(), 2 * capacity_);
      if (staging_) DB_CUDA_CHECK(cudaFreeHost(staging_));
      if (staged_words_) DB_CUDA_CHECK(cudaFree(staged_words_));
      staging_ = nullptr;
      staged_words_ = nullptr;
      capacity_ = 0;
      DB_CUDA_CHECK(cudaMallocHost(&staging_, want * sizeof(WordWrite)));
      staged_words_ = static_cast<WordWrite*>(allocate(want * sizeof(WordWrite)));
      capacity_ = want;
    }
    std::copy(words.begin(), words.end(), staging_);
    const int n = static_cast<int>(words.size());
    DB_CUDA_CHECK(cudaMemcpyAsync(staged_words_, staging_, words.size() * sizeof(WordWrite), cudaMemcpyHostToDevice,
                                  stream_));
    DB_CUDA_CHECK(cudaEventRecord(staged_, stream_));
    write_words_kernel<<<std::min(1024, (n + 255) / 256), 256, 0, stream_>>>(staged_words_, n);
    DB_CUDA_CHECK(cudaGetLastError());
  }

  void gather_block_tables(const std::int32_t* tables, std::int64_t row_stride, const std::int32_t* slot_lengths,
                           const std::int32_t* slots, const std::int32_t* indptr, int n, std::int32_t* out_pages,
                           std::int32_t* out_lens) override {
    if (n == 0) return;
    gather_block_tables_kernel<<<n, 128, 0, stream_>>>(tables, row_stride, slot_lengths, slots, indptr, out_pages,
                                                       out_lens);
    DB_CUDA_CHECK(cudaGetLastError());
  }

  void synchronize() override { DB_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  WordWrite* staging_ = nullptr;       // pinned host, capacity_ words
  WordWrite* staged_words_ = nullptr;  // device, capacity_ words
  std::size_t capacity_ = 0;
  cudaEvent_t staged_ = nullptr;       // recorded after the last copy out of staging_
};

}  // namespace

std::unique_ptr<MemoryBackend> make_device_backend(cudaStream_t stream) {
  return std::make_unique<DeviceBackend>(stream);
}

}  // namespace decode_bench
