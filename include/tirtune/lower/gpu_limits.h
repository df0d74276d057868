// What a CUDA device allows one kernel: the limits GPU lowering checks a schedule against and
// the code generator gates a compiled kernel on. A `cuda` Target (codegen/target.h) fills them
// from its -arch and overrides.
#pragma once

#include <cstdint>

namespace tirtune {

struct GpuLimits {
  /// Threads in one block (threadIdx.x * y * z). CUDA: 1024 on every supported arch.
  int64_t max_threads_per_block = 1024;
  /// Shared memory of one block without the opt-in attribute, in bytes: 48 KiB (static
  /// `__shared__` arrays cannot exceed it; ptxas rejects them).
  int64_t max_shared_memory_per_block = 48 * 1024;
  /// Shared memory of one block with the opt-in attribute (dynamic shared memory), in bytes:
  /// 227 KiB on sm_90, 163 KiB on sm_80, 99 KiB on sm_89.
  int64_t max_dynamic_shared_memory_per_block = 227 * 1024;
  /// Registers one thread may use. 255.
  int64_t max_registers_per_thread = 255;
  /// Registers of one block (registers per thread, rounded up to 8, times threads). 65536.
  int64_t max_registers_per_block = 65536;
  /// Threads of a warp. 32 on every NVIDIA GPU; not an option.
  int64_t warp_size = 32;
  /// Product of the extents of the vthread loops of one kernel (MetaSchedule's limit). 8.
  int64_t max_vthreads = 8;
  /// Widest vector load or store in bytes (float4). 16.
  int64_t vector_bytes = 16;
  /// Local memory of one thread, in bytes: its `local` buffers (times the virtual threads they
  /// are allocated under) and the stack frame ptxas reports. CUDA refuses to launch past 512 KiB
  /// (CUDA_ERROR_INVALID_VALUE), and an array that large is in slow local memory long before:
  /// 16 KiB by default, 4,096 floats.
  int64_t max_local_memory_per_thread = 16 * 1024;

  friend bool operator==(const GpuLimits& a, const GpuLimits& b) = default;
};

/// Extents CUDA allows per launch dimension, x then y then z (not options: the same everywhere).
inline constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};
inline constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};

}  // namespace tirtune
