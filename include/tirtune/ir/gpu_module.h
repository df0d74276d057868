// The lowered GPU form as data: a function split into device kernels, each with its launch
// dimensions and the variables that stand for the thread indices in its body, and the host's part
// (global intermediates, kernels launched in order). LowerGpu (lower/lower_gpu.h) produces it and
// states its contract; the GPU-semantics executor (interp/gpu_executor.h) and the CUDA code
// generator consume it.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tirtune/ir/function.h"

namespace tirtune {

/// The thread axes of a launch, in the order of GpuKernel's index arrays.
inline constexpr std::array<const char*, 3> kBlockIdxTags = {"blockIdx.x", "blockIdx.y",
                                                             "blockIdx.z"};
inline constexpr std::array<const char*, 3> kThreadIdxTags = {"threadIdx.x", "threadIdx.y",
                                                              "threadIdx.z"};

/// One kernel: the code every thread of every block runs for one launch.
struct GpuKernel {
  /// "<function>_kernel<N>", N counting the function's kernels from 0.
  std::string name;
  /// The global buffers the body uses: the function's parameters first (in their order), then
  /// the module's global intermediates (in theirs). One-dimensional.
  std::vector<Buffer> params;
  /// The shared-memory buffers of one block (one-dimensional, constant size), live for the whole
  /// kernel; the body refers to them without allocating them.
  std::vector<Buffer> shared;
  /// Blocks per grid and threads per block, x, y, z (1 for an unused axis).
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  /// The index variables (int64) through which the body reads blockIdx.x/y/z and
  /// threadIdx.x/y/z: named after their axis, every one defined, used or not.
  std::array<Var, 3> block_idx;
  std::array<Var, 3> thread_idx;
  /// What one thread runs (see lower_gpu.h for what it may contain).
  Stmt body;

  /// The shared buffers live in dynamic shared memory (`extern __shared__`, sized at launch and
  /// opted into above 48 KiB) instead of static `__shared__` arrays: set by PlanGpuAllocations
  /// when they need more than the static limit.
  bool dynamic_shared = false;

  int64_t ThreadsPerBlock() const { return block[0] * block[1] * block[2]; }
  /// The shared buffers' bytes.
  int64_t SharedBytes() const;
  /// Where shared buffer i starts in dynamic shared memory (each 16-byte aligned), and the bytes
  /// the launch gives (0 unless dynamic_shared).
  int64_t SharedOffset(size_t i) const;
  int64_t DynamicSharedBytes() const;
};

/// A function lowered for a GPU: the host allocates `global_allocs` and launches `kernels` in
/// order, each on the function's parameters and those intermediates.
struct GpuModule {
  /// The function as lowered before the split (its parameters are the module's, flattened).
  std::string name;
  std::vector<Buffer> params;
  /// Intermediates in global memory that outlive one kernel (one-dimensional, constant size).
  std::vector<Buffer> global_allocs;
  std::vector<GpuKernel> kernels;
};

/// The module in the text format: each kernel as a function header with its launch, shared
/// buffers and body (for tests, error messages and `tirtune lower --target cuda`).
std::string PrintGpuModule(const GpuModule& module);

}  // namespace tirtune
