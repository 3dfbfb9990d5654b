/* decode-bench's backend plugin ABI: a decode-attention kernel built OUTSIDE this tree, as a shared
 * library, measured by `decode-bench sweep --backend-lib FILE.so` exactly as the in-tree backends
 * are (harness/backend.hpp; docs/backends.md, "Plugins"). Plain C (C99 and C++, also from .cu
 * files): a plugin links nothing of decode-bench, only this header and the CUDA runtime.
 *
 * A plugin library exports two functions (extern "C"):
 *   int decode_bench_plugin_abi_version(void);   returns DECODE_BENCH_BACKEND_ABI_VERSION
 *   const decode_bench_backend* decode_bench_plugin_backends(int* count);
 *                                                  its backends, *count of them, alive until exit
 * decode-bench refuses a library whose version differs from its own: any change to a struct or a
 * function below is a new version.
 *
 * Per point, decode-bench calls supports, io_dtype, plan, then run (once for verification, then
 * the timed launches, maybe inside a CUDA graph, then counter replays), then plan_json. One
 * instance per device worker thread lives for the whole sweep (create with no device work,
 * destroy at the end); an instance is only ever called from one thread.
 */
#ifndef DECODE_BENCH_BACKEND_H
#define DECODE_BENCH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#define DECODE_BENCH_BACKEND_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* What to compute: the point's `kernel` axis. Only the kernels a backend computes are passed. */
typedef enum decode_bench_kernel {
  DECODE_BENCH_KERNEL_BASELINE = 1,      /* the seed paper's decode: any exact decode is fine */
  DECODE_BENCH_KERNEL_FLASH_DECODE = 2,  /* split-K decode: one sequence or a batch */
  DECODE_BENCH_KERNEL_BATCH_DECODE = 3,  /* the same decode under the batch experiments' name */
  DECODE_BENCH_KERNEL_SHARED_PREFIX = 4  /* never passed in version 1 (see below) */
} decode_bench_kernel;

/* Storage types of K/V (kv_dtype) and of q/o (io_dtype). */
typedef enum decode_bench_dtype {
  DECODE_BENCH_DTYPE_FP32 = 0,
  DECODE_BENCH_DTYPE_FP16 = 1,
  DECODE_BENCH_DTYPE_BF16 = 2,
  DECODE_BENCH_DTYPE_FP8_E4M3 = 3,
  DECODE_BENCH_DTYPE_FP8_E5M2 = 4
} decode_bench_dtype;

typedef enum decode_bench_layout {
  DECODE_BENCH_LAYOUT_CONTIGUOUS = 0,
  DECODE_BENCH_LAYOUT_PAGED = 1
} decode_bench_layout;

/* Contiguous K and V: (slots, heads_kv, max_len, head_dim) in kv_dtype; sequence b is slot b, the
 * row of token t of KV head g at element b * slot_stride + g * head_stride + t * head_dim. */
typedef struct decode_bench_contiguous_kv {
  const void* k;
  const void* v;
  int64_t slot_stride;    /* elements */
  int64_t head_stride;    /* elements */
  int32_t head_dim;
  const float* k_scale;   /* (heads_kv) device, FP8 only: stored value x scale; NULL means 1 */
  const float* v_scale;
} decode_bench_contiguous_kv;

/* Paged K and V: (pages, heads_kv, page_size, head_dim) in kv_dtype; sequence b owns pages
 * page_indices[indptr[b] .. indptr[b + 1]) in token order, token t at slot t % page_size of page
 * page_indices[indptr[b] + t / page_size]. */
typedef struct decode_bench_paged_kv {
  const void* k;
  const void* v;
  const int32_t* page_indices;  /* device */
  const int32_t* indptr;        /* (batch + 1) device */
  const int32_t* last_page_len; /* (batch) device: tokens in each last page (0: empty sequence) */
  int32_t page_size;
  int32_t heads_kv;
  int32_t head_dim;
  const float* k_scale;         /* as in decode_bench_contiguous_kv */
  const float* v_scale;
} decode_bench_paged_kv;

/* One decode-attention problem (harness/attention_problem.hpp). B = batch, H_q = heads_q,
 * H_kv = heads_kv, D = head_dim; query head h reads KV head h / (H_q / H_kv).
 *   q (B, H_q, D) io_dtype, o (B, H_q, D) io_dtype (written), lse (B, H_q) fp32 (written): the
 *   NATURAL-log log-sum-exp of the scaled scores q.k * softmax_scale.
 * In supports() device pointers are NULL; shapes, dtypes, layout, page size, host arrays and
 * requests are set. The problem stays alive and unchanged from plan() to the end of the point.
 * A shared-prefix batch (the sweep's prefix_len > 0) reaches a plugin as the plain decode of its
 * pages (kernel batch_decode: the page tables of sequences sharing a prefix name the same pages);
 * kernel shared_prefix is refused by decode-bench for every plugin in version 1. */
typedef struct decode_bench_problem {
  decode_bench_kernel kernel;
  int32_t heads_q;
  int32_t heads_kv;
  int32_t head_dim;
  float softmax_scale;          /* 1 / sqrt(head_dim) */
  int32_t batch;
  decode_bench_dtype kv_dtype;
  decode_bench_layout layout;
  decode_bench_contiguous_kv contiguous;  /* layout contiguous */
  decode_bench_paged_kv paged;            /* layout paged */
  const int32_t* seq_lens;       /* (B) device */
  const int32_t* host_seq_lens;  /* (B) host */
  const int32_t* host_indptr;    /* (B + 1) host, paged; NULL otherwise */
  int64_t max_len;               /* the longest sequence */
  int32_t splits;                /* the `blocks` request: split-K blocks per (sequence, KV head); 0 =
                                    the backend's choice. Honour it or refuse it in supports(). */
  decode_bench_dtype io_dtype;   /* what io_dtype() returned: fp32, fp16 or bf16 */
  const void* q;
  void* o;
  float* lse;
} decode_bench_problem;

/* Device scratch for plan(): allocate(ctx, bytes) returns device memory (NULL for 0 bytes, NULL on
 * failure: then return nonzero from plan), filled with 0xFF bytes, freed when the point ends.
 * plan() enqueues its uploads and zeroing on `stream`; every run comes after them. */
typedef struct decode_bench_workspace {
  void* ctx;
  void* (*allocate)(void* ctx, size_t bytes);
  cudaStream_t stream;
} decode_bench_workspace;

typedef struct decode_bench_instance decode_bench_instance;  /* the plugin's own, opaque */

/* One backend. Strings returned stay valid until the next call on the same instance (name and
 * version: until exit). */
typedef struct decode_bench_backend {
  /* The `backend` axis value: letters, digits, '_', '-', '.'; unique among the loaded backends. */
  const char* name;
  const char* version;  /* recorded in every point it runs */
  decode_bench_instance* (*create)(void);  /* no device work; NULL on failure */
  void (*destroy)(decode_bench_instance*);
  /* 0 when it computes `problem`; otherwise nonzero, with the reason (naming the parameter and
   * value) written into reason[0 .. reason_size), NUL-terminated. */
  int (*supports)(const decode_bench_instance*, const decode_bench_problem* problem, char* reason,
                  size_t reason_size);
  /* The dtype it reads q and writes o in (fp32, fp16 or bf16); decode-bench converts. */
  decode_bench_dtype (*io_dtype)(const decode_bench_instance*, const decode_bench_problem* problem);
  /* Host-side choices, workspace requests and uploads (untimed). 0 on success; otherwise nonzero
   * with the message written into error[0 .. error_size): the point records it as an error. */
  int (*plan)(decode_bench_instance*, const decode_bench_problem* problem, decode_bench_workspace* workspace,
              char* error, size_t error_size);
  /* The planned computation on `stream`: enqueue only (no synchronisation, allocation or host
   * reads), repeatable. Returns the launch status, a cudaError_t (cudaGetLastError()). */
  int (*run)(decode_bench_instance*, cudaStream_t stream);
  /* The last plan as a JSON object text (the point's "plan"; name its kernel "family"), or NULL
   * for {"family": name}. */
  const char* (*plan_json)(const decode_bench_instance*);
} decode_bench_backend;

/* The two symbols a plugin exports, and their types for dlsym. */
typedef int (*decode_bench_plugin_abi_version_fn)(void);
typedef const decode_bench_backend* (*decode_bench_plugin_backends_fn)(int* count);

#if defined(_WIN32)
#define DECODE_BENCH_PLUGIN_EXPORT __declspec(dllexport)
#else
#define DECODE_BENCH_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
}
#endif

#endif /* DECODE_BENCH_BACKEND_H */
