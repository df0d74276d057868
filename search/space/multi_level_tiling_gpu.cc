// MultiLevelTiling for CUDA: tiles a reduction block with data reuse (a matmul, a convolution)
// onto the GPU's thread hierarchy. Each spatial loop is split into 5 sampled perfect tiles
// (levels S0..S4), each reduction loop into 3 (R0..R2), and the tiles are ordered
//   S0 | R0 | S1 | S2 | R1 | S3 | R2 | S4
// S0's loops are fused and bound to blockIdx.x, S1's to vthread.x, S2's to threadIdx.x:
// MetaSchedule's "SSSRRSRS" with the outer reduction tile hoisted above the thread loops, so that
// the shared read caches, computed at the last R0 loop, are filled by all threads of a block once
// per slice of the reduction (with a barrier around), outside any thread loop. Every read indexed
// by a reduction iterator gets such a shared cache, annotated for RewriteCooperativeFetch with a
// sampled vector length; the result accumulates in a local write cache that is written back
// under the block loop, its loops split by the same sampled factors and bound to the same
// vthread and threadIdx extents, so that each thread writes the elements it accumulated. AutoInline then folds an elementwise epilogue into
// that write-back. A bias-add epilogue is first folded into the reduction where
// fuse_reduction_epilogue accepts it (a second design space).
//
// After (GEMM, i and j in 5 tiles, k in 3):
//   for i0_j0 in blockIdx.x:
//     for k0:
//       A_shared[...] = A[...]   (cooperative fetch)   B_shared[...] = B[...]
//       for i1_j1 in vthread.x: for i2_j2 in threadIdx.x:
//         for k1, i3, j3, k2, i4, j4:  C_local[...] += A_shared[...] * B_shared[...]
//     for ax0_1_ax1_1 in vthread.x: for ax0_2_ax1_2 in threadIdx.x: for ax0_3, ax1_3:
//       C[...] = C_local[...]
#include "block_analysis.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

constexpr int kSpatialLevels = 5;
constexpr int kReduceLevels = 3;

// The buffers the block reads with an index that moves with a reduction iterator (A and B of a
// GEMM, not the bias a fused epilogue reads once per output element), in read order.
std::vector<std::string> ReusedReads(const BlockNode* block) {
  std::vector<std::string> names;
  for (const BufferRegion& read : block->reads) {
    bool moves = false;
    for (const Range& range : read.region) {
      for (const IterVar& iv : block->iter_vars) {
        const VarNode* v = iv.var.get();
        if (iv.kind == IterKind::kReduce &&
            UsesVar(range.min, [v](const VarNode* u) { return u == v; })) {
          moves = true;
        }
      }
    }
    if (moves) names.push_back(read.buffer->name);
  }
  return names;
}

// The position of `buffer` among the block's reads (caching one read keeps the others').
std::optional<int> ReadIndex(const BlockNode* block, const std::string& buffer) {
  for (size_t i = 0; i < block->reads.size(); ++i) {
    if (block->reads[i].buffer->name == buffer) return static_cast<int>(i);
  }
  return std::nullopt;
}

class MultiLevelTilingGpu : public ScheduleRule {
 public:
  explicit MultiLevelTilingGpu(const GpuSpaceConfig& config)
      : max_innermost_factor_(config.max_innermost_factor),
        fetch_lanes_(config.fetch_vector_lanes) {}

  std::string name() const override { return "MultiLevelTilingGpu"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) override {
    if (!NeedsMultiLevelTiling(sch.state(), sch.Get(block))) return {sch};
    std::vector<Schedule> out;
    if (std::optional<Schedule> tiled = Tile(sch.Copy(), block)) out.push_back(std::move(*tiled));
    if (std::optional<Schedule> fused = FuseExactEpilogue(sch, block)) {
      if (std::optional<Schedule> tiled = Tile(std::move(*fused), block)) {
        out.push_back(std::move(*tiled));
      }
    }
    if (out.empty()) out.push_back(sch);
    return out;
  }

 private:
  std::optional<Schedule> Tile(Schedule s, BlockRV block) const {
    try {
      s.Annotate(block, kAnnTilingStructure, "SSSRRSRS");
      std::vector<LoopRV> loops = s.GetLoops(block);
      const BlockNode* b = s.Get(block)->block.get();
      // Step 1. Split every loop (trivial bindings: loop i drives iterator i).
      std::vector<std::vector<LoopRV>> s_tiles(kSpatialLevels), r_tiles(kReduceLevels);
      std::vector<std::vector<ExprRV>> s_factors;  // per spatial loop, its 5 factors
      for (size_t i = 0; i < loops.size(); ++i) {
        bool spatial = b->iter_vars[i].kind == IterKind::kSpatial;
        int levels = spatial ? kSpatialLevels : kReduceLevels;
        std::vector<ExprRV> factors = s.SamplePerfectTile(loops[i], levels, max_innermost_factor_);
        std::vector<LoopRV> parts =
            s.Split(loops[i], std::vector<SplitFactor>(factors.begin(), factors.end()));
        for (int l = 0; l < levels; ++l) (spatial ? s_tiles : r_tiles)[l].push_back(parts[l]);
        if (spatial) s_factors.push_back(factors);
      }
      // Step 2. S0 | R0 | S1 | S2 | R1 | S3 | R2 | S4.
      std::vector<LoopRV> order;
      for (const std::vector<LoopRV>* level : {&s_tiles[0], &r_tiles[0], &s_tiles[1], &s_tiles[2],
                                               &r_tiles[1], &s_tiles[3], &r_tiles[2],
                                               &s_tiles[4]}) {
        order.insert(order.end(), level->begin(), level->end());
      }
      s.Reorder(order);
      LoopRV bx = s.Fuse(s_tiles[0]);
      s.Bind(bx, "blockIdx.x");
      s.Bind(s.Fuse(s_tiles[1]), "vthread.x");
      s.Bind(s.Fuse(s_tiles[2]), "threadIdx.x");
      // Step 3. The local write cache, written back per thread under the block loop.
      BlockRV write_back = s.CacheWrite(block, /*write_index=*/0, StorageScope::kLocal);
      s.ReverseComputeAt(write_back, bx, /*preserve_unit_loops=*/true);
      std::vector<LoopRV> wb_loops = s.GetLoops(write_back);  // bx, then one per output dim
      if (wb_loops.size() != 1 + s_factors.size()) return std::nullopt;
      std::vector<LoopRV> wv, wt, rest;
      for (size_t d = 0; d < s_factors.size(); ++d) {
        std::vector<LoopRV> p = s.Split(
            wb_loops[1 + d], {SplitFactor(s_factors[d][1]), SplitFactor(s_factors[d][2]),
                              std::monostate{}});
        wv.push_back(p[0]);
        wt.push_back(p[1]);
        rest.push_back(p[2]);
      }
      std::vector<LoopRV> wb_order = wv;
      wb_order.insert(wb_order.end(), wt.begin(), wt.end());
      wb_order.insert(wb_order.end(), rest.begin(), rest.end());
      s.Reorder(wb_order);
      s.Bind(s.Fuse(wv), "vthread.x");
      s.Bind(s.Fuse(wt), "threadIdx.x");
      // Step 4. Shared read caches at the last R0 loop, fetched cooperatively.
      if (r_tiles[0].empty()) return std::nullopt;
      for (const std::string& buffer : ReusedReads(s.Get(block)->block.get())) {
        std::optional<int> index = ReadIndex(s.Get(block)->block.get(), buffer);
        if (!index) return std::nullopt;
        BlockRV cache = s.CacheRead(block, *index, StorageScope::kShared);
        s.ComputeAt(cache, r_tiles[0].back(), /*preserve_unit_loops=*/true);
        std::vector<double> probs(fetch_lanes_.size(), 1.0 / fetch_lanes_.size());
        ExprRV lanes = s.SampleCategorical(fetch_lanes_, std::move(probs));
        s.Annotate(cache, kAnnCooperativeFetch, lanes);
      }
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
    return s;
  }

  int max_innermost_factor_;
  std::vector<int64_t> fetch_lanes_;
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeMultiLevelTilingGpu(const GpuSpaceConfig& config) {
  return std::make_shared<MultiLevelTilingGpu>(config);
}

}  // namespace tirtune
