// Hand-written GPU schedules the GPU tests share (lowering and the executor in tests/lower, CUDA
// code generation in tests/codegen): an elementwise operator, a row reduction, and GEMM with
// shared tiles, cooperative fetches and a local accumulator.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tirtune/ir/op.h"
#include "tirtune/schedule/schedule.h"
#include "tirtune/te/create_prim_func.h"
#include "tirtune/te/tensor.h"
#include "tirtune/te/workload_registry.h"

namespace tirtune::gpu_schedules {

inline std::vector<Expr> Shape(std::vector<int64_t> dims) {
  std::vector<Expr> out;
  for (int64_t d : dims) out.push_back(IntImm(DataType::Index(), d));
  return out;
}

inline SplitFactor F(int64_t n) { return SplitFactor(n); }
inline const SplitFactor kInfer = std::monostate{};

// B[i, j] = A[i, j] * 2 + 1 over 64 x 32.
inline PrimFunc Elementwise() {
  te::Tensor a = te::Placeholder(Shape({64, 32}), DataType::Float(32), "A");
  te::Tensor b = te::Compute(
      Shape({64, 32}), {"i", "j"},
      [&](const std::vector<Var>& v) {
        return a(v[0], v[1]) * FloatImm(DataType::Float(32), 2.0) +
               FloatImm(DataType::Float(32), 1.0);
      },
      "B");
  return te::CreatePrimFunc({a, b}, "scale");
}

// B[i] = sum_k A[i, k] over 64 x 48.
inline PrimFunc RowSum() {
  te::Tensor a = te::Placeholder(Shape({64, 48}), DataType::Float(32), "A");
  IterVar k = te::ReduceAxis(IntImm(DataType::Index(), 48), "k");
  te::Tensor b = te::Compute(
      Shape({64}), {"i"}, [&](const std::vector<Var>& v) { return te::Sum(a(v[0], k.var), {k}); },
      "B");
  return te::CreatePrimFunc({a, b}, "row_sum");
}

inline int ReadIndex(Schedule& sch, BlockRV block, const std::string& buffer) {
  const auto& reads = sch.Get(block)->block->reads;
  for (size_t i = 0; i < reads.size(); ++i) {
    if (reads[i].buffer->name == buffer) return static_cast<int>(i);
  }
  ADD_FAILURE() << "block reads no " << buffer;
  return 0;
}

// GEMM 64 x 64 x 64, 16 blocks of 16 threads, each thread a 4 x 4 tile of C accumulated in
// local memory; per 8-wide slice of k the block's tiles of A and B are fetched into shared memory
// by all 16 threads together; the accumulator is written back by the thread that computed it.
inline PrimFunc ScheduledGemm(bool with_shared = true) {
  Schedule sch(MakeWorkload("gemm:64,64,64").func);
  BlockRV c = sch.GetBlock("C");
  BlockRV write_back = sch.CacheWrite(c, /*write_index=*/0, StorageScope::kLocal);
  std::vector<LoopRV> loops = sch.GetLoops(c);
  std::vector<LoopRV> is = sch.Split(loops[0], {F(4), F(4), F(4)});
  std::vector<LoopRV> js = sch.Split(loops[1], {F(4), F(4), F(4)});
  std::vector<LoopRV> ks = sch.Split(loops[2], {F(8), F(8)});
  sch.Reorder({is[0], js[0], ks[0], is[1], js[1], ks[1], is[2], js[2]});
  LoopRV bx = sch.Fuse({is[0], js[0]});
  LoopRV tx = sch.Fuse({is[1], js[1]});
  sch.Bind(bx, "blockIdx.x");
  sch.Bind(tx, "threadIdx.x");
  // The write-back under the block, each thread taking the 4 x 4 tile it accumulated.
  sch.ReverseComputeAt(write_back, bx);
  std::vector<LoopRV> w = sch.GetLoops(write_back);  // bx, ax0 (16), ax1 (16)
  std::vector<LoopRV> wi = sch.Split(w[1], {F(4), F(4)});
  std::vector<LoopRV> wj = sch.Split(w[2], {F(4), F(4)});
  sch.Reorder({wi[0], wj[0], wi[1], wj[1]});
  sch.Bind(sch.Fuse({wi[0], wj[0]}), "threadIdx.x");
  if (!with_shared) return sch.func();
  for (const char* input : {"A", "B"}) {
    BlockRV cache = sch.CacheRead(c, ReadIndex(sch, c, input), StorageScope::kShared);
    sch.ComputeAt(cache, ks[0]);
    std::vector<LoopRV> cl = sch.GetLoops(cache);  // bx, k0, ax0, ax1
    LoopRV fused = sch.Fuse({cl[2], cl[3]});
    sch.Bind(sch.Split(fused, {kInfer, F(16)})[1], "threadIdx.x");
  }
  return sch.func();
}

}  // namespace tirtune::gpu_schedules
