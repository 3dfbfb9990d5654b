/* Host-only backend plugins for the loader's and the adapter's tests (tests/test_plugin_backend.cpp),
 * in C99 so that include/decode_bench/backend.h is compiled as C too. tests/CMakeLists.txt builds
 * this file several times:
 *   (default)                        backend "host_test_plugin": a valid plugin that computes
 *                                    nothing (supports refuses head_dim != 64 with a reason naming
 *                                    the problem's fields; plan fails with a message)
 *   TEST_PLUGIN_NAME="..."           the same under another name (a clash, an invalid name)
 *   TEST_PLUGIN_ABI=N                a plugin of another ABI version
 *   TEST_PLUGIN_NO_SYMBOLS           a shared library exporting neither plugin symbol */
#include <stdio.h>

#include <decode_bench/backend.h>

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "host_test_plugin"
#endif
#ifndef TEST_PLUGIN_ABI
#define TEST_PLUGIN_ABI DECODE_BENCH_BACKEND_ABI_VERSION
#endif

#ifdef TEST_PLUGIN_NO_SYMBOLS

DECODE_BENCH_PLUGIN_EXPORT int not_a_decode_bench_plugin(void) { return 0; }

#else

/* One instance object is enough: it holds nothing. */
static int the_instance;

static decode_bench_instance* create(void) { return (decode_bench_instance*)&the_instance; }
static void destroy(decode_bench_instance* instance) { (void)instance; }

/* Refuses every head_dim but 64, echoing the fields it was given (the tests check the C view). */
static int supports(const decode_bench_instance* instance, const decode_bench_problem* p, char* reason,
                    size_t size) {
  (void)instance;
  if (p->head_dim == 64) return 0;
  snprintf(reason, size,
           "head_dim %d: " TEST_PLUGIN_NAME " takes 64 (kernel %d, heads %d/%d, batch %d, kv_dtype %d, layout %d, "
           "page_size %d, max_len %lld, splits %d, seq_lens[0] %d)",
           (int)p->head_dim, (int)p->kernel, (int)p->heads_q, (int)p->heads_kv, (int)p->batch, (int)p->kv_dtype,
           (int)p->layout, (int)p->paged.page_size, (long long)p->max_len, (int)p->splits,
           p->host_seq_lens ? (int)p->host_seq_lens[0] : -1);
  return 1;
}

static decode_bench_dtype io_dtype(const decode_bench_instance* instance, const decode_bench_problem* p) {
  (void)instance;
  /* batch 3 asks for a value outside the enum, which decode-bench refuses at plan time */
  return p->batch == 3 ? (decode_bench_dtype)42 : DECODE_BENCH_DTYPE_FP16;
}

/* Asks for 64 bytes of workspace, then fails with a message saying what it was given. */
static int plan(decode_bench_instance* instance, const decode_bench_problem* p, decode_bench_workspace* ws,
                char* error, size_t size) {
  void* scratch = ws->allocate(ws->ctx, 64);
  (void)instance;
  if (scratch == NULL) return 7; /* no message: decode-bench names the return code */
  snprintf(error, size, TEST_PLUGIN_NAME " computes nothing (batch %d, io_dtype %d, workspace given)", (int)p->batch,
           (int)p->io_dtype);
  return 1;
}

static int run(decode_bench_instance* instance, cudaStream_t stream) {
  (void)instance;
  (void)stream;
  return (int)cudaErrorNotReady;
}

static const char* plan_json(const decode_bench_instance* instance) {
  (void)instance;
  return "{\"family\": \"host_test\"}";
}

static const decode_bench_backend backends[] = {
    {TEST_PLUGIN_NAME, "0.0.1", create, destroy, supports, io_dtype, plan, run, plan_json}};

DECODE_BENCH_PLUGIN_EXPORT int decode_bench_plugin_abi_version(void) { return TEST_PLUGIN_ABI; }

DECODE_BENCH_PLUGIN_EXPORT const decode_bench_backend* decode_bench_plugin_backends(int* count) {
  *count = 1;
  return backends;
}

#endif
