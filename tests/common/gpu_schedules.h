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

// The non-root blocks of the current function, by name.
inline std::vector<std::string> BlockNames(const Schedule& sch) {
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) {
    if (b->block->name != "root") names.push_back(b->block->name);
  }
  return names;
}

/// A random GPU schedule of `original`: a few random steps (inlining, split, fuse, reorder, cache
/// stages in shared or local memory computed at a random loop, compute_at), then every loop nest
/// that is not yet in a kernel bound: its outermost loop split into blockIdx.x and threadIdx.x
/// (1 to 64 threads). A step that does not apply is skipped; a nest whose outer loop cannot be
/// bound (a reduction) stays unbound, which LowerGpu refuses.
inline Schedule RandomGpuSchedule(const PrimFunc& original, int64_t seed) {
  Schedule sch(original, static_cast<uint64_t>(seed));
  RandomEngine rng(static_cast<uint64_t>(9000 + seed));
  auto pick = [&](size_t n) {
    return static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(n)));
  };
  auto attempt = [](auto&& step) {
    try {
      step();
    } catch (const ScheduleError&) {
    }
  };
  int steps = static_cast<int>(rng.UniformInt(0, 6));
  for (int s = 0; s < steps; ++s) {
    std::vector<std::string> names = BlockNames(sch);
    if (names.empty()) break;
    BlockRV block = sch.GetBlock(names[pick(names.size())]);
    std::vector<LoopRV> loops = sch.GetLoops(block);
    StorageScope scope = rng.UniformInt(0, 2) ? StorageScope::kShared : StorageScope::kLocal;
    switch (rng.UniformInt(0, 7)) {
      case 0:
        attempt([&] { sch.ComputeInline(block); });
        break;
      case 1:
        if (!loops.empty()) {
          attempt([&] { sch.Split(loops[pick(loops.size())], {kInfer, F(rng.UniformInt(2, 5))}); });
        }
        break;
      case 2:
        if (loops.size() >= 2) {
          size_t a = pick(loops.size() - 1);
          attempt([&] { sch.Fuse({loops[a], loops[a + 1]}); });
        }
        break;
      case 3:
        if (loops.size() >= 2) {
          attempt([&] { sch.Reorder({loops.back(), loops[loops.size() - 2]}); });
        }
        break;
      case 4: {
        size_t n = sch.Get(block)->block->reads.size();
        if (n == 0 || loops.empty()) break;
        attempt([&] {
          BlockRV cache = sch.CacheRead(block, static_cast<int>(pick(n)), scope);
          sch.ComputeAt(cache, loops[pick(loops.size())]);
        });
        break;
      }
      case 5:
        if (loops.empty()) break;
        attempt([&] {
          BlockRV cache = sch.CacheWrite(block, 0, scope);
          sch.ReverseComputeAt(cache, loops[pick(loops.size())]);
        });
        break;
      case 6: {
        std::vector<LoopRV> other = sch.GetLoops(sch.GetBlock(names[pick(names.size())]));
        if (!other.empty()) attempt([&] { sch.ComputeAt(block, other[pick(other.size())]); });
        break;
      }
    }
  }
  // Every nest not yet in a kernel gets one.
  for (const std::string& name : BlockNames(sch)) {
    BlockRV block = sch.GetBlock(name);
    std::vector<LoopRV> loops = sch.GetLoops(block);
    if (loops.empty()) {
      attempt([&] { loops = {sch.AddUnitLoop(block)}; });
      if (loops.empty()) continue;
    }
    if (sch.Get(loops[0])->for_kind == ForKind::kThreadBinding) continue;
    int64_t threads = int64_t{1} << rng.UniformInt(0, 7);
    attempt([&] {
      std::vector<LoopRV> parts = sch.Split(loops[0], {kInfer, F(threads)});
      sch.Bind(parts[0], "blockIdx.x");
      sch.Bind(parts[1], "threadIdx.x");
    });
  }
  return sch;
}

}  // namespace tirtune::gpu_schedules
