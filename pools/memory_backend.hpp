#pragma once
// Where a pool's bytes live. The allocator logic (free list, refcounts, block tables, capacity)
// never looks at this: it only asks a backend to allocate arenas and move bytes, so the same
// pool code runs on a GPU, in host memory (tests), or with no memory at all (capacity counts).
//   device:     arenas from the harness's device pool (harness/device_memory.hpp); every copy is
//               cudaMemcpy*Async on the backend's stream.
//   host:       aligned host memory; copies are memcpy. Pointers handed out are host pointers,
//               so the CPU reference reads a pool directly.
//   accounting: allocates nothing and moves nothing; exact page/slot accounting for budgets the
//               machine does not have (the host path of `decode-bench capacity`).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <cuda_runtime.h>

namespace decode_bench {

class StepUploadBlock;  // kernels/step_upload_block.hpp

enum class BackendKind { host, device, accounting };

constexpr std::string_view backend_name(BackendKind k) {
  switch (k) {
    case BackendKind::host: return "host";
    case BackendKind::device: return "device";
    case BackendKind::accounting: return "accounting";
  }
  return "?";
}

// One 4-byte word of pool memory to set (a block-table entry, an indptr or length word).
struct WordWrite {
  std::int32_t* dst = nullptr;
  std::int32_t value = 0;
};

class MemoryBackend {
 public:
  virtual ~MemoryBackend() = default;
  virtual BackendKind kind() const = 0;
  bool has_memory() const { return kind() != BackendKind::accounting; }

  // Throws PoolError(OutOfDeviceMemory) when the allocation fails; nullptr for 0 bytes and on
  // the accounting backend.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;

  // Host -> pool memory. The host source may be reused as soon as the call returns: the device
  // backend copies a small one-row upload into page-locked staging first (an asynchronous copy
  // that never waits for the stream: pools/staging_rotation.hpp), and leaves a larger or pitched
  // one to cudaMemcpyAsync, which takes pageable memory before it returns.
  virtual void upload(void* dst, std::size_t dst_pitch, const void* src_host, std::size_t src_pitch,
                      std::size_t width, std::size_t height) = 0;
  // Sets each word (distinct destinations), in stream order like upload. The default uploads them
  // one by one; the device backend stages them all in one of its pinned staging slots and sets
  // them with one copy and one scatter launch, so a step's metadata costs no per-sequence
  // pageable copy and no wait for the step in flight.
  virtual void write_words(std::span<const WordWrite> words) {
    for (const WordWrite& w : words) upload(w.dst, sizeof w.value, &w.value, sizeof w.value, sizeof w.value, 1);
  }
  // Pool memory -> pool memory (copy-on-write of a page, fork of a contiguous slot).
  virtual void copy(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                    std::size_t height) = 0;
  // Pool memory -> host; returns after the bytes have arrived.
  virtual void download(void* dst_host, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                        std::size_t width, std::size_t height) = 0;

  // Builds a batch's CSR in pool memory from per-slot block-table rows, without a host copy:
  //   tables: (max_seqs, row_stride) int32, slot_lengths: (max_seqs) int32
  //   slots, indptr: (n), (n + 1) int32 already in pool memory
  //   out_pages[indptr[i] + j] = tables[slots[i] * row_stride + j],  out_lens[i] = slot_lengths[slots[i]]
  virtual void gather_block_tables(const std::int32_t* tables, std::int64_t row_stride,
                                   const std::int32_t* slot_lengths, const std::int32_t* slots,
                                   const std::int32_t* indptr, int n, std::int32_t* out_pages,
                                   std::int32_t* out_lens) = 0;

  virtual void synchronize() = 0;
  virtual cudaStream_t stream() const { return nullptr; }

  // Collection, for a serving step whose uploads go to the GPU together (kernels/step_uploads.hpp):
  // while `block` is set, upload, write_words, copy and gather_block_tables record into it, in
  // order, instead of enqueuing anything, and the block's owner carries them out with one copy and
  // one launch; download and synchronize are refused meanwhile (what they would wait for is not on
  // the stream yet). nullptr ends it. Only the device backend collects; the others refuse a block.
  virtual void collect_into(StepUploadBlock* block) {
    if (block)
      throw std::logic_error("the " + std::string(backend_name(kind())) +
                             " backend cannot collect uploads into a step block");
  }
};

// Collection for a scope: ends it however the scope is left.
class CollectedUploads {
 public:
  CollectedUploads(MemoryBackend& backend, StepUploadBlock& block) : backend_(backend) { backend.collect_into(&block); }
  ~CollectedUploads() { backend_.collect_into(nullptr); }
  CollectedUploads(const CollectedUploads&) = delete;
  CollectedUploads& operator=(const CollectedUploads&) = delete;

 private:
  MemoryBackend& backend_;
};

std::unique_ptr<MemoryBackend> make_host_backend();
std::unique_ptr<MemoryBackend> make_accounting_backend();
// stream == nullptr: the backend creates (and owns) a non-blocking stream of its own.
std::unique_ptr<MemoryBackend> make_device_backend(cudaStream_t stream = nullptr);
std::unique_ptr<MemoryBackend> make_backend(BackendKind kind);

// A move-only arena owned through its backend.
class PoolBuffer {
 public:
  PoolBuffer() = default;
  PoolBuffer(MemoryBackend& backend, std::size_t bytes) : backend_(&backend), bytes_(bytes) {
    ptr_ = backend.allocate(bytes);
  }
  PoolBuffer(PoolBuffer&& o) noexcept { swap(o); }
  PoolBuffer& operator=(PoolBuffer&& o) noexcept {
    PoolBuffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;
  ~PoolBuffer() {
    if (backend_ && ptr_) backend_->deallocate(ptr_);
  }

  std::byte* data() const { return static_cast<std::byte*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  template <class T> T* as() const { return static_cast<T*>(ptr_); }

 private:
  void swap(PoolBuffer& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }
  MemoryBackend* backend_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace decode_bench
