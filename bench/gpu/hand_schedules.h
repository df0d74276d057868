// Hand-written GPU schedules the GPU bundle measures: a plain one-thread-per-output schedule for
// any workload (the reference the tiled kernels are compared with at large sizes, and the
// "untuned" time), and tiled schedules for GEMM and conv2d.
#pragma once

#include <string>

#include "tirtune/schedule/schedule.h"

namespace tirtune::gpu_bundle {

/// Every block of `func` (in order) becomes one kernel: its leading spatial loops fused and split
/// into blockIdx.x and threadIdx.x (the largest divisor of the extent up to `max_threads`), the
/// reduction loops serial in each thread.
Schedule PlainGpuSchedule(const PrimFunc& func, int64_t max_threads = 256);

/// GEMM tiling for a "gemm:M,N,K" function. Each block of threads_y x threads_x threads computes
/// a (threads_y * tile_y) x (threads_x * tile_x) tile of C; each thread a tile_y x tile_x tile
/// accumulated in registers (a local buffer), its rows `threads_y` apart when `strided` (so that
/// the threads of a warp read consecutive shared-memory words) and adjacent otherwise; per
/// k_tile-wide slice of K the block's tiles of A and B are fetched into shared memory by all
/// threads together.
struct GemmTiling {
  int64_t threads_y = 16, threads_x = 16;
  int64_t tile_y = 8, tile_x = 8;
  int64_t k_tile = 8;
  bool strided = true;
  /// Unroll the per-thread loops (so the accumulator lives in registers).
  bool unroll = true;
  /// The accumulator's initialization in its own loop nest before the K loop (decompose
  /// reduction) instead of a test in the innermost loop.
  bool decompose = true;
  /// Elements each thread moves per access (1, 2 or 4: vectorized loops, float4 in CUDA) in the
  /// fetch of the shared tiles and, for adjacent tiles, in the write-back of C.
  int64_t vector_lanes = 1;

  std::string Describe() const;
};
Schedule TiledGemmSchedule(const PrimFunc& gemm, const GemmTiling& tiling);

/// Tiling for a "conv2d:N,H,W,CI,CO,K,1,P" function (NHWC data, HWIO weights). The padded input
/// is its own kernel (plain); in the convolution each block computes h_tile rows of
/// (w_threads * w_tile) pixels times (co_threads * co_tile) output channels, each thread a
/// w_tile x co_tile tile in registers; per rc_tile input channels the
/// block's input window and weights are fetched into shared memory by all threads together.
struct ConvTiling {
  int64_t h_tile = 1;
  int64_t w_threads = 8, w_tile = 1;
  int64_t co_threads = 16, co_tile = 4;
  int64_t rc_tile = 8;
  /// A thread's pixels and channels `threads` apart (else adjacent).
  bool strided = true;
  /// Elements each thread moves per access (1, 2 or 4) in the fetch of the shared tiles and, for
  /// adjacent tiles, in the write-back of the output.
  int64_t vector_lanes = 1;

  std::string Describe() const;
};
Schedule TiledConv2dSchedule(const PrimFunc& conv, const ConvTiling& tiling);

/// Softmax of a "softmax:M,N" function, one block of `threads` threads per row: the exponentials
/// inlined; the row's maximum and sum each reduced in two steps (rfactor): every thread reduces
/// its share of the row into a shared-memory slot, then every thread reduces the slots into its
/// own register copy of the result; the normalized row written by all threads.
Schedule SoftmaxSchedule(const PrimFunc& softmax, int64_t threads);

/// Softmax of a "softmax:M,N" function, one block of `threads` threads per row, the row's maximum
/// and sum each a cross-thread reduction (each thread reduces its strided share, then the
/// threads combine theirs: warp shuffles when `threads` is a power of two, shared memory
/// otherwise), every thread keeping its own copy of the result; the normalized row written by
/// all threads.
Schedule SoftmaxCrossThreadSchedule(const PrimFunc& softmax, int64_t threads);

}  // namespace tirtune::gpu_bundle
