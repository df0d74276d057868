/* The C ABI between compiled kernels and the tirtune runtime: the calling convention of a
 * compiled PrimFunc and the few runtime functions that generated code calls. Plain C so that a
 * runner written in any language can call kernels; the code generator refers to these names.
 *
 * Kernel calling convention
 * -------------------------
 * A lowered PrimFunc named NAME compiles to
 *
 *     int32_t NAME(void** args);
 *
 * where args[i] points to the first element of the buffer bound to parameter i (64-byte
 * aligned, compact, of the parameter's element type: bool is one byte per element, float16 and
 * bfloat16 are two). Buffers must not overlap (parameters are `noalias`). The return value is
 * 0 on success, TIRTUNE_ERR_ALLOC when a heap workspace could not be allocated, or the first
 * non-zero value a parallel task returned.
 *
 * Parallel loops
 * --------------
 * A parallel loop `for i in [min, min + extent)` is outlined into a body function and run as
 *
 *     tirtune_parallel_for(body, closure, extent, max_tasks);
 *
 * The runtime splits [0, extent) into at most `max_tasks` contiguous, nearly equal chunks (at
 * most the pool size when max_tasks <= 0, and never more than extent) and calls
 * body(begin, end, closure) once per chunk, on the pool's threads and on the calling thread.
 * It returns when every chunk has finished: 0, or the first non-zero value a chunk returned.
 * A call made from inside a running chunk (a nested parallel loop), or while another thread
 * holds the pool, runs body(0, extent, closure) serially on the calling thread.
 */
#ifndef TIRTUNE_RUNTIME_C_RUNTIME_API_H_
#define TIRTUNE_RUNTIME_C_RUNTIME_API_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of kernels and runtime calls. */
#define TIRTUNE_OK 0
#define TIRTUNE_ERR_ALLOC (-1)

/* The entry point of a compiled PrimFunc. */
typedef int32_t (*TirtuneKernelFunc)(void** args);

/* One chunk [begin, end) of an outlined parallel loop (iteration numbers count from 0). */
typedef int32_t (*TirtuneParallelBody)(int64_t begin, int64_t end, void* closure);

/* Runs `body` over [0, extent) on the global thread pool (see above). */
int32_t tirtune_parallel_for(TirtuneParallelBody body, void* closure, int64_t extent,
                             int32_t max_tasks);

/* Heap storage for an Allocate too large for the stack: `nbytes` bytes aligned to `alignment`
 * (a power of two); null on failure. Release with tirtune_workspace_free. */
void* tirtune_workspace_alloc(int64_t nbytes, int64_t alignment);
void tirtune_workspace_free(void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* TIRTUNE_RUNTIME_C_RUNTIME_API_H_ */
