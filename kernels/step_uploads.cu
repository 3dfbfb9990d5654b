#include "kernels/step_uploads.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include <cooperative_groups.h>

#include "harness/cuda_check.hpp"
#include "kernels/device_attribute_cache.hpp"
#include "kernels/kernel_occupancy_cache.hpp"

namespace decode_bench {
namespace {

constexpr int kThreads = 256;
static_assert(kStepCopyPieceBytes == kThreads * 16, "a copy piece is one 16-byte store a thread");
static_assert(kStepGatherSequencesPerPiece == kThreads / 32, "a gather piece is one sequence a warp");
static_assert(sizeof(StepUploadOp) == 24 && alignof(StepGather) <= kStepUploadAlign);

struct PhaseEnds {
  std::uint32_t end[kStepUploadMaxPhases];
};

// n bytes, in 16-byte, 4-byte or 1-byte pieces as the addresses and the length allow (a segment's
// source in the block is 16-byte aligned; its destination is the caller's).
__device__ void copy_piece(std::byte* dst, const std::byte* src, std::uint32_t n) {
  const auto a = reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | n;
  if ((a & 15) == 0) {
    for (std::uint32_t i = threadIdx.x; i < n / 16; i += blockDim.x)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  } else if ((a & 3) == 0) {
    for (std::uint32_t i = threadIdx.x; i < n / 4; i += blockDim.x)
      reinterpret_cast<std::uint32_t*>(dst)[i] = reinterpret_cast<const std::uint32_t*>(src)[i];
  } else {
    for (std::uint32_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  }
}

// One warp a sequence. Its inputs (block tables, lengths, slots, indptr) may have been written by
// an earlier phase of this launch: read through L2 (ld.global.cg), never a stale L1 line.
__device__ void gather_piece(const StepGather& g, std::uint32_t first, std::uint32_t count) {
  const unsigned lane = threadIdx.x % 32;
  for (std::uint32_t k = threadIdx.x / 32; k < count; k += blockDim.x / 32) {
    const std::uint32_t i = first + k;
    const std::int32_t slot = __ldcg(g.slots + i);
    const std::int32_t begin = __ldcg(g.indptr + i), n = __ldcg(g.indptr + i + 1) - begin;
    const std::int32_t* row = g.tables + static_cast<std::int64_t>(slot) * g.row_stride;
    for (std::int32_t j = static_cast<std::int32_t>(lane); j < n; j += 32) g.out_pages[begin + j] = __ldcg(row + j);
    if (lane == 0) g.out_lens[i] = __ldcg(g.slot_lengths + slot);
  }
}

// Phases [first_phase, last_phase) of the block's operations, one thread block a piece in turn; a
// grid-wide barrier between phases (only in a cooperative launch: a plain launch runs one phase).
__global__ void __launch_bounds__(kThreads)
    step_upload_kernel(const std::byte* block, std::uint64_t ops_offset, PhaseEnds phases, int first_phase,
                       int last_phase) {
  const auto* ops = reinterpret_cast<const StepUploadOp*>(block + ops_offset);
  for (int p = first_phase; p < last_phase; ++p) {
    if (p > first_phase) cooperative_groups::this_grid().sync();
    const std::uint32_t begin = p == 0 ? 0 : phases.end[p - 1];
    for (std::uint32_t i = begin + blockIdx.x; i < phases.end[p]; i += gridDim.x) {
      const StepUploadOp op = ops[i];
      switch (static_cast<StepUploadKind>(op.kind)) {
        case StepUploadKind::copy_staged:
          copy_piece(reinterpret_cast<std::byte*>(op.dst), block + op.src, op.count);
          break;
        case StepUploadKind::copy_device:
          copy_piece(reinterpret_cast<std::byte*>(op.dst), reinterpret_cast<const std::byte*>(op.src), op.count);
          break;
        case StepUploadKind::words: {
          const auto* words = reinterpret_cast<const StepWord*>(block + op.src);
          for (std::uint32_t w = threadIdx.x; w < op.count; w += blockDim.x) *words[w].dst = words[w].value;
          break;
        }
        case StepUploadKind::gather:
          gather_piece(*reinterpret_cast<const StepGather*>(block + op.src), static_cast<std::uint32_t>(op.dst),
                       op.count);
          break;
      }
    }
  }
}

}  // namespace

cudaError_t launch_step_uploads(const StepUploadImage& image, const std::byte* device_block, cudaStream_t stream,
                                StepUploadLaunch mode, int* launches) {
  if (image.bytes == 0 || image.phases == 0) return cudaSuccess;
  if (image.phases > kStepUploadMaxPhases) return cudaErrorInvalidValue;
  PhaseEnds ends{};
  std::copy(image.phase_end, image.phase_end + kStepUploadMaxPhases, ends.end);
  int device = 0, sms = 0, cooperative = 0;
  DB_RETURN_IF_ERROR(cudaGetDevice(&device));
  DB_RETURN_IF_ERROR(cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (mode == StepUploadLaunch::cooperative_if_supported && image.phases > 1)
    DB_RETURN_IF_ERROR(cached_device_attribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  const std::uint64_t ops_offset = image.ops_offset;
  if (cooperative) {
    // Every block resident at once, as the barrier needs: at most the kernel's occupancy on every SM.
    int per_sm = 0;
    DB_RETURN_IF_ERROR(prepared_occupancy(reinterpret_cast<const void*>(&step_upload_kernel), 0, false, kThreads, 0,
                                          &per_sm));
    const int blocks = static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(image.widest_phase, std::int64_t{per_sm} * sms)));
    const std::byte* block = device_block;
    std::uint64_t offset = ops_offset;
    int first = 0, last = image.phases;
    void* args[] = {&block, &offset, &ends, &first, &last};
    DB_RETURN_IF_ERROR(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&step_upload_kernel), dim3(blocks),
                                                   dim3(kThreads), args, 0, stream));
    if (launches) ++*launches;
    return cudaSuccess;
  }
  for (int p = 0; p < image.phases; ++p) {
    const std::uint32_t n = image.phase_end[p] - (p == 0 ? 0 : image.phase_end[p - 1]);
    if (n == 0) continue;
    const int blocks = static_cast<int>(std::min<std::int64_t>(n, std::int64_t{8} * std::max(sms, 1)));
    step_upload_kernel<<<blocks, kThreads, 0, stream>>>(device_block, ops_offset, ends, p, p + 1);
    DB_RETURN_IF_ERROR(cudaGetLastError());
    if (launches) ++*launches;
  }
  return cudaSuccess;
}

StepUploads::StepUploads(cudaStream_t stream, StepUploadLaunch mode) : stream_(stream), mode_(mode) {}

std::span<std::byte> StepUploads::grow(int parity, std::size_t bytes, std::span<const std::byte> held) {
  // The old memory's copies are done (the parity rule), so it may go once its bytes are moved.
  PinnedBuffer<std::byte> grown(bytes + bytes / 2);
  if (!held.empty()) std::memcpy(grown.get(), held.data(), held.size());
  memory_[parity] = std::move(grown);
  ++counts_.grows;
  return {memory_[parity].get(), memory_[parity].bytes()};
}

StepUploadBlock& StepUploads::begin(int parity) {
  if (parity != 0 && parity != 1)
    throw std::invalid_argument("step uploads: parity " + std::to_string(parity) + " (0 or 1)");
  constexpr std::size_t kFirstBytes = std::size_t{64} << 10;
  const std::size_t want = std::max({block_[0].wanted(), block_[1].wanted(), kFirstBytes});
  StepUploadBlock& b = block_[parity];
  if (memory_[parity].bytes() < want) {
    memory_[parity] = PinnedBuffer<std::byte>(want + want / 2);
    b.reset({memory_[parity].get(), memory_[parity].bytes()},
            [this, parity](std::size_t bytes, std::span<const std::byte> held) { return grow(parity, bytes, held); });
  } else {
    b.reset();
  }
  parity_ = parity;
  return b;
}

void StepUploads::flush() {
  if (parity_ < 0) throw std::logic_error("step uploads: flush() before begin()");
  StepUploadBlock& b = block_[parity_];
  const StepUploadImage& image = b.finish();
  if (image.bytes == 0) return;
  // Grows while a trace warms up; the old device copy is freed once the device is idle.
  if (device_.bytes() < image.bytes) device_ = DeviceBuffer<std::byte>(image.bytes + image.bytes / 2);
  DB_CUDA_CHECK(cudaMemcpyAsync(device_.get(), b.data(), image.bytes, cudaMemcpyHostToDevice, stream_));
  int launches = 0;
  DB_CUDA_CHECK(launch_step_uploads(image, device_.get(), stream_, mode_, &launches));
  ++counts_.flushes;
  ++counts_.copies;
  counts_.launches += launches;
  counts_.phases += image.phases;
  counts_.bytes += static_cast<std::int64_t>(image.bytes);
}

}  // namespace decode_bench
