#include "hand_schedules.h"

#include <fmt/format.h>

#include "tirtune/support/error.h"

namespace tirtune::gpu_bundle {
namespace {

int64_t ConstExtent(Schedule& sch, LoopRV loop) {
  const int64_t* extent = AsConstInt(sch.Get(loop)->extent);
  TT_ICHECK(extent != nullptr, "a loop of non-constant extent");
  return *extent;
}

int64_t LargestDivisorUpTo(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

int ReadIndex(Schedule& sch, BlockRV block, const std::string& buffer) {
  const auto& reads = sch.Get(block)->block->reads;
  for (size_t i = 0; i < reads.size(); ++i) {
    if (reads[i].buffer->name == buffer) return static_cast<int>(i);
  }
  TT_USER_ERROR("block {} reads no buffer {}", sch.BlockName(block), buffer);
}

// Splits `loop` into (outer, threads, per-thread) loops, per-thread elements `threads` apart
// when `strided`, adjacent otherwise. Returns {outer, thread loop, per-thread loop}.
std::array<LoopRV, 3> SplitForThreads(Schedule& sch, LoopRV loop, int64_t threads, int64_t tile,
                                      bool strided) {
  if (strided) {
    std::vector<LoopRV> p = sch.Split(loop, {std::monostate{}, SplitFactor(tile),
                                             SplitFactor(threads)});
    return {p[0], p[2], p[1]};
  }
  std::vector<LoopRV> p =
      sch.Split(loop, {std::monostate{}, SplitFactor(threads), SplitFactor(tile)});
  return {p[0], p[1], p[2]};
}

// The copy loops of a shared cache, shared out among threads_y x threads_x threads: the
// innermost copy loop split by `lanes` (vectorized when lanes > 1, so each thread moves `lanes`
// adjacent elements per access), the rest fused and split over the threads.
void CooperativeFetch(Schedule& sch, std::vector<LoopRV> copy, int64_t threads_y,
                      int64_t threads_x, int64_t lanes) {
  LoopRV vector;
  if (lanes > 1) {
    std::vector<LoopRV> v = sch.Split(copy.back(), {std::monostate{}, SplitFactor(lanes)});
    copy.back() = v[0];
    vector = v[1];
  }
  LoopRV fused = sch.Fuse(copy);
  std::vector<LoopRV> f =
      sch.Split(fused, {std::monostate{}, SplitFactor(threads_y), SplitFactor(threads_x)});
  sch.Bind(f[1], "threadIdx.y");
  sch.Bind(f[2], "threadIdx.x");
  if (lanes > 1) sch.Vectorize(vector);
}

}  // namespace

Schedule PlainGpuSchedule(const PrimFunc& func, int64_t max_threads) {
  Schedule sch(func);
  std::vector<std::string> names;
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) {
    if (b->block->name != "root") names.push_back(b->block->name);
  }
  for (const std::string& name : names) {
    BlockRV block = sch.GetBlock(name);
    std::vector<LoopRV> loops = sch.GetLoops(block);
    const std::vector<IterVar>& iters = sch.Get(block)->block->iter_vars;
    size_t spatial = 0;
    while (spatial < iters.size() && spatial < loops.size() &&
           iters[spatial].kind == IterKind::kSpatial) {
      ++spatial;
    }
    LoopRV outer;
    if (spatial == 0) {
      outer = loops.empty() ? sch.AddUnitLoop(block) : sch.AddUnitLoop(loops[0]);
    } else if (spatial == 1) {
      outer = loops[0];
    } else {
      outer = sch.Fuse(std::vector<LoopRV>(loops.begin(), loops.begin() + spatial));
    }
    int64_t threads = LargestDivisorUpTo(ConstExtent(sch, outer), max_threads);
    std::vector<LoopRV> parts = sch.Split(outer, {std::monostate{}, SplitFactor(threads)});
    sch.Bind(parts[0], "blockIdx.x");
    sch.Bind(parts[1], "threadIdx.x");
  }
  return sch;
}

std::string GemmTiling::Describe() const {
  return fmt::format("{}x{} threads, {}x{} per thread ({}), k tile {}, {}{}{}", threads_y,
                     threads_x, tile_y, tile_x, strided ? "strided" : "adjacent", k_tile,
                     unroll ? "unrolled" : "not unrolled",
                     decompose ? ", init hoisted" : "",
                     vector_lanes > 1 ? fmt::format(", {}-lane accesses", vector_lanes) : "");
}

Schedule TiledGemmSchedule(const PrimFunc& gemm, const GemmTiling& t) {
  Schedule sch(gemm);
  BlockRV c = sch.GetBlock("C");
  BlockRV write_back = sch.CacheWrite(c, /*write_index=*/0, StorageScope::kLocal);
  std::vector<LoopRV> loops = sch.GetLoops(c);  // i, j, k
  auto [i0, ty, ti] = SplitForThreads(sch, loops[0], t.threads_y, t.tile_y, t.strided);
  auto [j0, tx, tj] = SplitForThreads(sch, loops[1], t.threads_x, t.tile_x, t.strided);
  std::vector<LoopRV> ks = sch.Split(loops[2], {std::monostate{}, SplitFactor(t.k_tile)});
  sch.Reorder({i0, j0, ks[0], ty, tx, ks[1], ti, tj});
  sch.Bind(i0, "blockIdx.y");
  sch.Bind(j0, "blockIdx.x");
  sch.Bind(ty, "threadIdx.y");
  sch.Bind(tx, "threadIdx.x");
  if (t.unroll) {
    sch.Unroll(ks[1]);
    sch.Unroll(ti);
    sch.Unroll(tj);
  }
  // The write-back: each thread stores the tile it accumulated.
  sch.ReverseComputeAt(write_back, j0);
  std::vector<LoopRV> w = sch.GetLoops(write_back);  // i0, j0, ax0, ax1
  auto [wa0, wty, wti] = SplitForThreads(sch, w[2], t.threads_y, t.tile_y, t.strided);
  auto [wb0, wtx, wtj] = SplitForThreads(sch, w[3], t.threads_x, t.tile_x, t.strided);
  (void)wa0;
  (void)wb0;
  sch.Reorder({wty, wtx, wti, wtj});
  sch.Bind(wty, "threadIdx.y");
  sch.Bind(wtx, "threadIdx.x");
  if (t.vector_lanes > 1 && !t.strided) {
    std::vector<LoopRV> v = sch.Split(wtj, {std::monostate{}, SplitFactor(t.vector_lanes)});
    sch.Vectorize(v[1]);
  }
  // The block's tiles of A and B in shared memory, fetched by all threads per slice of K.
  for (const char* input : {"A", "B"}) {
    BlockRV cache = sch.CacheRead(c, ReadIndex(sch, c, input), StorageScope::kShared);
    sch.ComputeAt(cache, ks[0]);
    std::vector<LoopRV> cl = sch.GetLoops(cache);  // i0, j0, k0, ax0, ax1
    CooperativeFetch(sch, {cl[3], cl[4]}, t.threads_y, t.threads_x, t.vector_lanes);
  }
  // The copied loops keep their kinds: the init is bound and unrolled like the update.
  if (t.decompose) sch.DecomposeReduction(c, ks[0]);
  return sch;
}

std::string ConvTiling::Describe() const {
  return fmt::format("{} row(s) x {}x{} pixels x {}x{} channels per block ({}), rc tile {}{}",
                     h_tile, w_threads, w_tile, co_threads, co_tile,
                     strided ? "strided" : "adjacent", rc_tile,
                     vector_lanes > 1 ? fmt::format(", {}-lane accesses", vector_lanes) : "");
}

Schedule TiledConv2dSchedule(const PrimFunc& conv, const ConvTiling& t) {
  Schedule sch(conv);
  BlockRV c = sch.GetBlock("conv2d_nhwc");
  BlockRV write_back = sch.CacheWrite(c, /*write_index=*/0, StorageScope::kLocal);
  std::vector<LoopRV> loops = sch.GetLoops(c);  // n, h, w, co, rh, rw, rc
  LoopRV nh = sch.Fuse({loops[0], loops[1]});
  std::vector<LoopRV> hs = sch.Split(nh, {std::monostate{}, SplitFactor(t.h_tile)});
  auto [w0, wthr, wt] = SplitForThreads(sch, loops[2], t.w_threads, t.w_tile, t.strided);
  auto [co0, cothr, cot] = SplitForThreads(sch, loops[3], t.co_threads, t.co_tile, t.strided);
  std::vector<LoopRV> rcs = sch.Split(loops[6], {std::monostate{}, SplitFactor(t.rc_tile)});
  sch.Reorder({hs[0], w0, co0, rcs[0], wthr, cothr, loops[4], loops[5], rcs[1], hs[1], wt, cot});
  sch.Bind(hs[0], "blockIdx.y");
  LoopRV bx = sch.Fuse({w0, co0});
  sch.Bind(bx, "blockIdx.x");
  sch.Bind(wthr, "threadIdx.y");
  sch.Bind(cothr, "threadIdx.x");
  for (LoopRV l : {rcs[1], hs[1], wt, cot}) sch.Unroll(l);
  // The write-back: each thread stores its tile.
  sch.ReverseComputeAt(write_back, bx);
  std::vector<LoopRV> w = sch.GetLoops(write_back);  // ..., w, co
  auto [wa0, wty, wti] = SplitForThreads(sch, w[w.size() - 2], t.w_threads, t.w_tile, t.strided);
  auto [wb0, wtx, wtj] = SplitForThreads(sch, w[w.size() - 1], t.co_threads, t.co_tile, t.strided);
  (void)wa0;
  (void)wb0;
  sch.Reorder({wty, wtx, wti, wtj});
  sch.Bind(wty, "threadIdx.y");
  sch.Bind(wtx, "threadIdx.x");
  if (t.vector_lanes > 1 && !t.strided) {
    std::vector<LoopRV> v = sch.Split(wtj, {std::monostate{}, SplitFactor(t.vector_lanes)});
    sch.Vectorize(v[1]);
  }
  // The input window and the weights of a slice of input channels, in shared memory.
  size_t inputs = sch.Get(c)->block->reads.size();
  for (size_t r = 0; r < inputs; ++r) {
    BlockRV cache = sch.CacheRead(c, static_cast<int>(r), StorageScope::kShared);
    sch.ComputeAt(cache, rcs[0]);
    std::vector<LoopRV> cl = sch.GetLoops(cache);  // hs0, bx, rc0, then the copy's loops
    CooperativeFetch(sch, std::vector<LoopRV>(cl.begin() + 3, cl.end()), t.w_threads,
                     t.co_threads, t.vector_lanes);
  }
  sch.DecomposeReduction(c, rcs[0]);
  // The padded input: a kernel of its own, one thread per element.
  for (const BlockRealizeNode* b : sch.state().AllBlocks()) {
    if (b->block->name != "pad_temp") continue;
    BlockRV pad = sch.GetBlock("pad_temp");
    LoopRV all = sch.Fuse(sch.GetLoops(pad));
    int64_t threads = LargestDivisorUpTo(ConstExtent(sch, all), 256);
    std::vector<LoopRV> p = sch.Split(all, {std::monostate{}, SplitFactor(threads)});
    sch.Bind(p[0], "blockIdx.x");
    sch.Bind(p[1], "threadIdx.x");
    break;
  }
  return sch;
}

namespace {

// Both softmax schedules: exp inlined, the normalization's rows on blocks and its columns split
// over `threads` threads. Sets `*row` to the row loop, where the reductions go.
Schedule SoftmaxRowsOnBlocks(const PrimFunc& softmax, int64_t threads, LoopRV* row) {
  Schedule sch(softmax);
  sch.ComputeInline(sch.GetBlock("T_softmax_exp"));
  std::vector<LoopRV> rows = sch.GetLoops(sch.GetBlock("T_softmax_norm"));  // i, k
  std::vector<LoopRV> cols = sch.Split(rows[1], {std::monostate{}, SplitFactor(threads)});
  sch.Bind(rows[0], "blockIdx.x");
  sch.Bind(cols[1], "threadIdx.x");
  *row = rows[0];
  return sch;
}

}  // namespace

Schedule SoftmaxSchedule(const PrimFunc& softmax, int64_t threads) {
  LoopRV row;
  Schedule sch = SoftmaxRowsOnBlocks(softmax, threads, &row);
  BlockRV max = sch.GetBlock("T_softmax_maxelem");
  BlockRV sum = sch.GetBlock("T_softmax_expsum");
  for (BlockRV reduction : {sum, max}) {
    std::vector<LoopRV> loops = sch.GetLoops(reduction);  // i, k
    std::vector<LoopRV> ks = sch.Split(loops[1], {std::monostate{}, SplitFactor(threads)});
    // partial[kt, i]: thread kt's share of row i, accumulated in a register, stored once into
    // its shared-memory slot; then every thread reduces the slots into its own copy.
    BlockRV partial = sch.RFactor(ks[1], 0);
    BlockRV store = sch.CacheWrite(partial, 0, StorageScope::kLocal);
    sch.SetScope(store, 0, StorageScope::kShared);
    sch.SetScope(reduction, 0, StorageScope::kLocal);
    sch.ComputeAt(reduction, row);
    sch.ComputeAt(store, row);
    LoopRV slot = sch.GetLoops(store).back();
    sch.Bind(slot, "threadIdx.x");
    sch.ComputeAt(partial, slot);
  }
  return sch;
}

Schedule SoftmaxCrossThreadSchedule(const PrimFunc& softmax, int64_t threads) {
  LoopRV row;
  Schedule sch = SoftmaxRowsOnBlocks(softmax, threads, &row);
  for (const char* name : {"T_softmax_expsum", "T_softmax_maxelem"}) {
    BlockRV reduction = sch.GetBlock(name);
    sch.SetScope(reduction, 0, StorageScope::kLocal);
    sch.ComputeAt(reduction, row);
    LoopRV k = sch.GetLoops(reduction).back();
    std::vector<LoopRV> ks = sch.Split(k, {std::monostate{}, SplitFactor(threads)});
    sch.Reorder({ks[1], ks[0]});
    sch.Bind(ks[1], "threadIdx.x");
  }
  return sch;
}

}  // namespace tirtune::gpu_bundle
