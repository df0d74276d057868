// GPU lowering: turns a scheduled PrimFunc in block form whose loops are bound to GPU thread axes
// into the lowered GPU form (ir/gpu_module.h), as a fixed recipe of passes
// (src/lower/lower_gpu_pipeline.cc).
//
// The lowered GPU form (the contract between GPU lowering, the GPU-semantics executor and the
// CUDA code generator):
//  - the host part is the module: its parameters (one-dimensional, in the function's order), the
//    global intermediates it allocates, and its kernels, launched one after the other in order;
//    nothing else runs on the host;
//  - a kernel has constant launch dimensions within the target's limits (threads per block,
//    block and grid extents per axis) and reads blockIdx/threadIdx through its index variables;
//    its body holds no Block, BlockRealize or thread-bound loop (each thread-bound loop was
//    replaced by its axis's index variable, vthread loops by serial loops);
//  - every buffer is one-dimensional; the body accesses only the kernel's params (global), its
//    shared buffers (declared by the kernel: static `__shared__` arrays up to the target's static
//    shared memory, or in dynamic shared memory up to its opt-in limit, GpuKernel::dynamic_shared)
//    and `local` buffers it allocates itself with Allocate nodes of constant size, one copy per
//    thread;
//  - loops are serial or unrolled (constant extent); vectorized loops became vector statements
//    as on the CPU (lower.h); the CUDA code generator prints them lane by lane, moving a
//    contiguous access of a global or shared buffer whose first element provably lies on a
//    multiple of 4 (or 2) elements as float4 (float2, int4, ...): every global buffer the host
//    passes and every shared array starts 16-byte aligned;
//  - a `sync_threads()` statement (Barrier) separates every write of a shared buffer from a later
//    read or write of the same buffer by the code that follows it, including across the back
//    edge of a loop; barriers stand only where every thread of a block reaches them (never under
//    a condition or a loop bound that depends on threadIdx);
//  - index arithmetic is int64 and simplified.
#pragma once

#include <string>
#include <vector>

#include "tirtune/ir/gpu_module.h"
#include "tirtune/lower/gpu_limits.h"
#include "tirtune/lower/lower.h"

namespace tirtune {

/// Runs the GPU lowering recipe for a device with `limits` (Target::gpu for a cuda target).
/// Throws UserError when the schedule cannot run on a GPU (see VerifyThreadBinding), naming what
/// is wrong.
GpuModule LowerGpu(const PrimFunc& func, const GpuLimits& limits, const LowerOptions& options = {});

/// The recipe's first half: the loop form (flattened, unrolled and vectorized as `options` say)
/// with its thread-bound loops still in place, before it is checked against any limits and split
/// into kernels. What the cost model's features are computed on (LowerForFeatures).
PrimFunc LowerGpuToLoops(const PrimFunc& func, const LowerOptions& options = {});

/// Whether `func` has a loop bound to a GPU thread axis (a GPU schedule).
bool HasThreadBindings(const PrimFunc& func);

// ---- The GPU passes, one per file in src/lower/, public so that tests can run them alone. ----

/// Block form: every reduction that runs across GPU threads (a reduction loop bound to threadIdx)
/// becomes per-thread partial results combined by warp shuffles or shared memory and written
/// once; UserError for one it cannot lower (lower_cross_thread_reduction.cc).
PrimFunc LowerCrossThreadReduction(const PrimFunc& func);

/// Loop form (flattened): the reasons `func` cannot be split into kernels for `limits`, one
/// message each; empty when it can (verify_thread_binding.cc).
std::vector<std::string> VerifyThreadBinding(const PrimFunc& func, const GpuLimits& limits);

/// Loop form that passed VerifyThreadBinding: each outermost thread-bound loop nest becomes a
/// kernel with its launch dimensions and thread-bound loops replaced by the index variables;
/// global allocations around them become the module's intermediates (split_host_device.cc).
GpuModule SplitHostDevice(const PrimFunc& func);

/// A kernel's shared allocations move out of its body into GpuKernel::shared, in dynamic shared
/// memory beyond the static limit (throws UserError beyond the opt-in limit); local allocations
/// stay, checked to be of constant size (plan_gpu_allocations.cc).
GpuKernel PlanGpuAllocations(const GpuKernel& kernel, const GpuLimits& limits);

/// Inserts the barriers the contract above asks for (insert_barriers.cc).
GpuKernel InsertBarriers(const GpuKernel& kernel);

}  // namespace tirtune
