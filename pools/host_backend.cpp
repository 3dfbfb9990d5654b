// Host and accounting backends: the same byte movements as the device backend, done with memcpy
// (host) or not at all (accounting).
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "pools/memory_backend.hpp"
#include "pools/pool_error.hpp"

namespace decode_bench {
namespace {

constexpr std::align_val_t kArenaAlignment{256};  // cudaMalloc's alignment, so layouts agree

void copy_strided(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                  std::size_t height) {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  for (std::size_t r = 0; r < height; ++r) std::memmove(d + r * dst_pitch, s + r * src_pitch, width);
}

class HostBackend final : public MemoryBackend {
 public:
  BackendKind kind() const override { return BackendKind::host; }
  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    void* p = ::operator new(bytes, kArenaAlignment, std::nothrow);
    if (!p)
      throw PoolError(PoolErrorKind::OutOfDeviceMemory,
                      "host backend could not allocate " + std::to_string(bytes) + " bytes");
    return p;
  }
  void deallocate(void* p) noexcept override { ::operator delete(p, kArenaAlignment); }
  void upload(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    copy_strided(dst, dp, src, sp, w, h);
  }
  void copy(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    copy_strided(dst, dp, src, sp, w, h);
  }
  void download(void* dst, std::size_t dp, const void* src, std::size_t sp, std::size_t w, std::size_t h) override {
    copy_strided(dst, dp, src, sp, w, h);
  }
  void gather_block_tables(const std::int32_t* tables, std::int64_t row_stride, const std::int32_t* slot_lengths,
                           const std::int32_t* slots, const std::int32_t* indptr, int n, std::int32_t* out_pages,
                           std::int32_t* out_lens) override {
    for (int i = 0; i < n; ++i) {
      const std::int32_t* row = tables + slots[i] * row_stride;
      std::copy(row, row + (indptr[i + 1] - indptr[i]), out_pages + indptr[i]);
      out_lens[i] = slot_lengths[slots[i]];
    }
  }
  void synchronize() override {}
};

class AccountingBackend final : public MemoryBackend {
 public:
  BackendKind kind() const override { return BackendKind::accounting; }
  void* allocate(std::size_t) override { return nullptr; }
  void deallocate(void*) noexcept override {}
  void upload(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) override {}
  void copy(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) override {}
  void download(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) override {
    throw PoolError(PoolErrorKind::NoMemory, "the accounting backend holds no K/V data to read back");
  }
  void gather_block_tables(const std::int32_t*, std::int64_t, const std::int32_t*, const std::int32_t*,
                           const std::int32_t*, int, std::int32_t*, std::int32_t*) override {}
  void synchronize() override {}
};

}  // namespace

std::unique_ptr<MemoryBackend> make_host_backend() { return std::make_unique<HostBackend>(); }
std::unique_ptr<MemoryBackend> make_accounting_backend() { return std::make_unique<AccountingBackend>(); }

std::unique_ptr<MemoryBackend> make_backend(BackendKind kind) {
  switch (kind) {
    case BackendKind::host: return make_host_backend();
    case BackendKind::accounting: return make_accounting_backend();
    case BackendKind::device: return make_device_backend();
  }
  throw PoolError(PoolErrorKind::InvalidArgument, "unknown backend kind");
}

}  // namespace decode_bench
