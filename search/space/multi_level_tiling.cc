// MultiLevelTiling: tiles a reduction block with data reuse (a matmul, a convolution) by the
// structure string, "SSRSRS" on CPU: each spatial loop is split into as many sampled tiles as
// there are S's, each reduction loop into as many as there are R's (the innermost factor at most
// max_innermost_factor; guarded tiles, whose outermost factor covers an extent the others do not
// divide, unless config.guarded_tiles is off, then exact divisors only), and the tiles are
// reordered by level
// (s0.. s1.. r0.. s2.. r1.. s3..). Then it forks on where the result is written:
//  - the single consumer is an elementwise epilogue (e.g. a ReLU into which AutoInline folded a
//    bias add): that consumer is reverse_compute_at'd under the last loop of tile level 1 or 2,
//    or left where it is;
//  - otherwise: no write cache, or a `local` write cache (cache_write) reverse_compute_at'd at
//    tile level 1 or 2 — a register/L1 tile written back once per outer tile, the structure of
//    the hand-written GEMM schedule of bench/common/gemm_tiling.h.
// On targets with 16 vector registers (AVX2), one more group pins the innermost spatial level to
// the register tile that fills them (PickRegisterTile: e.g. 6 output pixels x 2 vectors of
// channels, 12 accumulators, guarded where 6 does not divide the row) and samples the rest.
// When the single consumer is an exact epilogue (a bias add), a further group of variants first
// folds it into the reduction with fuse_reduction_epilogue (the primitive rejects other
// epilogues), then tiles and forks as above. A plain GEMM thus gives 3 design spaces (6 on AVX2
// when a register tile is pinned); one whose
// extents 16 does not divide (1023, 197) 3 more, padded first with pad_einsum to multiples of 16
// (unless config.guarded_tiles is off).
// When an operand is read a vector at a time along rows whose length no vector divides (B of a
// GEMM with N = 1023: every row starts at another offset in a cache line), 3 more first copy it
// into rows padded to whole vectors (cache_read + storage_align), if the block reuses each
// element at least 64 times.
// When no spatial iterator can be vectorized (every one strides through some buffer, as the
// output rows of a dense layer whose weight is [N, K]) or the ones that can are narrower than a
// vector (a matrix times a vector), but a reduction iterator runs contiguously through the reads,
// one more variant vectorizes the reduction: that loop is split into lanes, rfactor makes the
// lanes a spatial axis of partial sums `<C>_rf[..., lane]` (tiled like the rest, the lanes
// innermost), and the final reduction over the lanes runs under the tile levels.
//
// Before:                      After (tiles of i, j: 4 levels; of k: 2), write cache at level 2:
//   for i, j, k:                 for i0, j0, i1, j1:
//     C[i, j] += A[i, k] *         for k0, i2, j2, k1, i3, j3:  C_local[..] += A[..] * B[..]
//                B[k, j]           for ax0, ax1:                C[..] = C_local[..]
#include "block_analysis.h"
#include "tirtune/ir/substitute.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

// A schedule whose block has been tiled: tiles[l] holds the loops of structure level l,
// outermost first.
struct TiledState {
  Schedule sch;
  std::vector<std::vector<LoopRV>> tiles;
};

// A register tile to pin (MultiLevelTiling's innermost spatial level): `rows` iterations of
// iterator row_iter by `vector_elements` of iterator vector_iter (whole vectors).
struct RegisterTile {
  size_t row_iter = 0;
  int64_t rows = 1;
  size_t vector_iter = 0;
  int64_t vector_elements = 1;
};

// A block that copies elementwise: one write, and every read maps injectively and in order onto
// it (MetaSchedule's IsWriteCache).
bool IsElementwiseEpilogue(const BlockNode* block) {
  if (!IsSpatialBlock(block) || block->writes.size() != 1) return false;
  for (const BufferRegion& read : block->reads) {
    std::optional<ReadWritePattern> pattern = AnalyzeReadWrite(read, block->writes[0]);
    if (!pattern || !pattern->injective || !pattern->ordered) return false;
  }
  return true;
}

class MultiLevelTiling : public ScheduleRule {
 public:
  explicit MultiLevelTiling(const CpuSpaceConfig& config)
      : structure_(config.tiling_structure),
        max_innermost_factor_(config.max_innermost_factor),
        guarded_tiles_(config.guarded_tiles),
        vector_bytes_(config.vector_bytes) {
    for (size_t l = 0; l < structure_.size(); ++l) {
      TT_ICHECK(structure_[l] == 'S' || structure_[l] == 'R',
                "tiling structure '{}' has '{}'; only S and R are allowed", structure_,
                structure_[l]);
      (structure_[l] == 'S' ? s_levels_ : r_levels_).push_back(l);
    }
    TT_ICHECK(!s_levels_.empty() && !r_levels_.empty(),
              "tiling structure '{}' needs at least one S and one R", structure_);
  }

  std::string name() const override { return "MultiLevelTiling"; }

  std::vector<Schedule> Apply(const Schedule& sch, BlockRV block) override {
    if (!NeedsMultiLevelTiling(sch.state(), sch.Get(block))) return {sch};
    std::vector<Schedule> out;
    // Step 1. The reduction as it is.
    if (std::optional<TiledState> tiled = TileLoopNest(sch, block)) {
      AddWriteReuse(std::move(*tiled), block, &out);
    }
    // Step 1b. With 16 vector registers (AVX2), the register tile that fills them pinned: the
    // sampler rarely draws it (its rows need a guarded tile of 5 or 6 where the extent is 14 or
    // 56).
    if (std::optional<RegisterTile> tile = PickRegisterTile(sch.Get(block)->block.get())) {
      if (std::optional<TiledState> tiled = TileLoopNest(sch, block, tile)) {
        AddWriteReuse(std::move(*tiled), block, &out);
      }
    }
    // Step 2. With an exact (bias-add) epilogue folded in first.
    if (std::optional<Schedule> fused = FuseExactEpilogue(sch, block)) {
      if (std::optional<TiledState> tiled = TileLoopNest(*fused, block)) {
        AddWriteReuse(std::move(*tiled), block, &out);
      }
    }
    // Step 3. Extents of 16 or more that 16 does not divide (1023, 197): the iteration space
    // padded to multiples of 16 first (PadEinsum: zero-filled input copies with aligned rows, the
    // output copied back), then tiled as above.
    if (guarded_tiles_) {
      if (std::optional<Schedule> padded = PadToMultiples(sch, block, 16)) {
        if (std::optional<TiledState> tiled = TileLoopNest(*padded, block)) {
          AddWriteReuse(std::move(*tiled), block, &out);
        }
      }
    }
    // Step 4. Operands read a vector at a time along rows whose length is no multiple of a
    // vector (B[k, j] of a GEMM with N = 1023): copied first into rows padded to whole vectors,
    // so no vector load straddles two cache lines, then tiled as above.
    if (std::optional<Schedule> aligned = AlignOperandRows(sch, block)) {
      if (std::optional<TiledState> tiled = TileLoopNest(*aligned, block)) {
        AddWriteReuse(std::move(*tiled), block, &out);
      }
    }
    // Step 5. Nothing spatial to vectorize along, a contiguous reduction: lanes of partial sums.
    AddReductionLanes(sch, block, &out);
    if (out.empty()) out.push_back(sch);
    return out;
  }

 private:
  // The reduction loop to vectorize into lanes, and how many lanes; nullopt when a spatial
  // iterator of at least a vector's extent is contiguous in every access, or no reduction iterator
  // is (used only as the last index of the reads, with coefficient 1, and a vector of lanes at
  // least 4 divides its extent).
  struct LaneChoice {
    size_t iter = 0;
    int64_t lanes = 0;
  };
  std::optional<LaneChoice> ChooseReductionLanes(const BlockNode* block) const {
    if (block->writes.size() != 1) return std::nullopt;
    const int64_t max_lanes = vector_bytes_ / block->writes[0].buffer->dtype.bytes();
    std::optional<LaneChoice> choice;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      const int64_t* extent = AsConstInt(iv.dom.extent);
      if (extent == nullptr) return std::nullopt;
      bool contiguous = true;
      bool in_read = false;
      bool in_write = false;
      for (const BufferRegion& r : block->reads) {
        contiguous &= IsContiguousAlong(r, iv.var.get(), &in_read);
      }
      contiguous &= IsContiguousAlong(block->writes[0], iv.var.get(), &in_write);
      if (!contiguous) continue;
      if (iv.kind == IterKind::kSpatial) {
        if (in_write && *extent >= max_lanes) return std::nullopt;  // vectorizes as it is
        continue;
      }
      if (!in_read || choice) continue;
      for (int64_t lanes = max_lanes; lanes >= 4; lanes /= 2) {
        if (*extent % lanes == 0) {
          choice = LaneChoice{i, lanes};
          break;
        }
      }
    }
    return choice;
  }

  void AddReductionLanes(const Schedule& sch, BlockRV block, std::vector<Schedule>* out) const {
    std::optional<LaneChoice> choice = ChooseReductionLanes(sch.Get(block)->block.get());
    if (!choice) return;
    Schedule s = sch.Copy();
    try {
      // Step 1. The reduction loop split into (outer, lanes); the lanes become the last dimension
      // of the partial sums.
      std::vector<LoopRV> loops = s.GetLoops(block);
      const size_t num_write_dims = s.Get(block)->block->writes[0].region.size();
      std::vector<LoopRV> split = s.Split(loops[choice->iter], {std::monostate{}, choice->lanes});
      BlockRV rf = s.RFactor(split[1], static_cast<int>(num_write_dims));
      // Step 2. The partial-sum block tiled by the structure, its lane loop kept whole and
      // innermost (so it is the one vectorized).
      s.Annotate(rf, kAnnTilingStructure, structure_);
      std::vector<std::vector<LoopRV>> tiles(structure_.size());
      for (LoopRV loop : s.GetLoops(rf)) {
        if (s.Get(loop) == s.Get(split[1])) continue;
        const bool spatial = IterKindOfLoop(s.Get(loop)) == LoopIterKind::kSpatial;
        SplitIntoLevels(s, loop, spatial ? s_levels_ : r_levels_, &tiles);
      }
      std::vector<LoopRV> order;
      for (const std::vector<LoopRV>& level : tiles)
        order.insert(order.end(), level.begin(), level.end());
      order.push_back(split[1]);
      s.Reorder(order);
      // The lanes are the point of the variant: vectorized here, whatever vector width the
      // function's other blocks sample (ParallelizeVectorizeUnroll).
      s.Vectorize(split[1]);
      // Step 3. The final reduction over the lanes under spatial tile level 0 or 1.
      ComputeAtLevels(TiledState{std::move(s), std::move(tiles)}, block, out);
    } catch (const ScheduleError&) {
      // rfactor or the tiling refused (e.g. a second block under the loops)
    }
  }

  // Splits `loop` by a sampled tile (guarded or perfect) into one part per level of `levels`
  // (positions in the structure), appending each part to its level's loops in `tiles`.
  void SplitIntoLevels(Schedule& s, LoopRV loop, const std::vector<size_t>& levels,
                       std::vector<std::vector<LoopRV>>* tiles) const {
    const int n = static_cast<int>(levels.size());
    std::vector<ExprRV> factors = guarded_tiles_
                                      ? s.SampleGuardedTile(loop, n, max_innermost_factor_)
                                      : s.SamplePerfectTile(loop, n, max_innermost_factor_);
    std::vector<LoopRV> parts =
        s.Split(loop, std::vector<SplitFactor>(factors.begin(), factors.end()));
    for (size_t j = 0; j < levels.size(); ++j) (*tiles)[levels[j]].push_back(parts[j]);
  }

  // Tiles the block's loops by the structure. With `pinned`, the innermost spatial level is that
  // register tile: its row and vector loops are split by its fixed factors first (guarded when
  // they do not divide), the outer parts sampled over the other spatial levels, and every other
  // spatial loop has no part in the innermost level.
  std::optional<TiledState> TileLoopNest(const Schedule& sch, BlockRV block,
                                         std::optional<RegisterTile> pinned = {}) const {
    TiledState state{sch.Copy(), std::vector<std::vector<LoopRV>>(structure_.size())};
    Schedule& s = state.sch;
    const std::vector<size_t> outer_s_levels(s_levels_.begin(), s_levels_.end() - 1);
    std::optional<LoopRV> pinned_rows;
    std::optional<LoopRV> pinned_vector;
    try {
      s.Annotate(block, kAnnTilingStructure, structure_);
      std::vector<LoopRV> loops = s.GetLoops(block);
      const BlockNode* b = s.Get(block)->block.get();
      // Trivial bindings (checked by NeedsMultiLevelTiling): loop i drives iterator i.
      for (size_t i = 0; i < loops.size(); ++i) {
        if (b->iter_vars[i].kind != IterKind::kSpatial) {
          SplitIntoLevels(s, loops[i], r_levels_, &state.tiles);
        } else if (!pinned) {
          SplitIntoLevels(s, loops[i], s_levels_, &state.tiles);
        } else if (i == pinned->row_iter || i == pinned->vector_iter) {
          const int64_t inner = i == pinned->row_iter ? pinned->rows : pinned->vector_elements;
          std::vector<LoopRV> halves = s.Split(loops[i], {std::monostate{}, inner});
          SplitIntoLevels(s, halves[0], outer_s_levels, &state.tiles);
          (i == pinned->row_iter ? pinned_rows : pinned_vector) = halves[1];
        } else {
          SplitIntoLevels(s, loops[i], outer_s_levels, &state.tiles);
        }
      }
      // The rows, then the vector innermost (the one vectorized), whatever the iterators' order.
      if (pinned) {
        state.tiles[s_levels_.back()].push_back(*pinned_rows);
        state.tiles[s_levels_.back()].push_back(*pinned_vector);
      }
      std::vector<LoopRV> order;
      for (const std::vector<LoopRV>& level : state.tiles) {
        order.insert(order.end(), level.begin(), level.end());
      }
      s.Reorder(order);
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
    return state;
  }

  // The register tile to pin for targets with 16 vector registers (AVX2; vector_bytes 32): rows
  // (the output's second-to-last index) x vectors (its last, contiguous index) of accumulators,
  // as many as fit beside one register per weight vector and one broadcast (rows x vectors +
  // vectors + 1 <= 16), the vectors dividing their extent, the rows rounding theirs up by at most
  // 15%; on a tie of accumulators, the rows that round less. Only tiles of more than 8
  // accumulators, which exact power-of-two factors do not give (4 x 2 vectors): nullopt otherwise,
  // or when the output is not indexed that way. 56 or 28 pixels a row: 6 rows (rounded to 60 or
  // 30) x 2 vectors; 14: 5 rows (15) x 2 vectors; 7: none (7 x 2 needs 17 registers).
  std::optional<RegisterTile> PickRegisterTile(const BlockNode* b) const {
    constexpr int kVectorRegisters = 16;
    constexpr int kMinAccumulators = 9;
    if (vector_bytes_ != 32 || !guarded_tiles_ || s_levels_.size() < 2 || b->writes.size() != 1) {
      return std::nullopt;
    }
    const BufferRegion& out = b->writes[0];
    if (out.region.size() < 2) return std::nullopt;
    auto spatial_iter = [&](const Expr& index) -> std::optional<size_t> {
      const auto* var = index.as<VarNode>();
      for (size_t i = 0; var != nullptr && i < b->iter_vars.size(); ++i) {
        if (b->iter_vars[i].var.get() == var && b->iter_vars[i].kind == IterKind::kSpatial) {
          return i;
        }
      }
      return std::nullopt;
    };
    std::optional<size_t> row = spatial_iter(out.region[out.region.size() - 2].min);
    std::optional<size_t> vec = spatial_iter(out.region.back().min);
    if (!row || !vec || *row == *vec) return std::nullopt;
    // Every read that walks the vector's iterator walks it as its last, contiguous index (a dense
    // layer's weight stored [N, K] does not: no vector of it is one load).
    const VarNode* vec_var = b->iter_vars[*vec].var.get();
    for (const BufferRegion& read : b->reads) {
      for (size_t d = 0; d + 1 < read.region.size(); ++d) {
        if (UsesVar(read.region[d].min, [&](const VarNode* v) { return v == vec_var; })) {
          return std::nullopt;
        }
      }
    }
    const int64_t* row_extent = AsConstInt(b->iter_vars[*row].dom.extent);
    const int64_t* vec_extent = AsConstInt(b->iter_vars[*vec].dom.extent);
    if (row_extent == nullptr || vec_extent == nullptr) return std::nullopt;
    const int64_t lanes = vector_bytes_ / out.buffer->dtype.bytes();
    // The elements a tile of `factor` adds to `extent` (rounded up), when that is small enough.
    auto rounding = [](int64_t extent, int64_t factor) -> std::optional<int64_t> {
      if (factor > extent) return std::nullopt;
      int64_t padded = (extent + factor - 1) / factor * factor;
      if (!GuardedRoundingIsSmall(extent, padded)) return std::nullopt;
      return padded - extent;
    };
    std::optional<RegisterTile> best;
    int64_t best_accumulators = 0;
    int64_t best_added = 0;
    // At least two vectors: one vector of many rows loads a broadcast per multiply-add.
    for (int64_t vectors = 2; vectors * 2 + 1 <= kVectorRegisters; ++vectors) {
      // Whole vectors that divide the extent: a guarded vector loop (256 channels by 24) is slow.
      if (*vec_extent % (vectors * lanes) != 0) continue;
      for (int64_t rows = 1; rows * vectors + vectors + 1 <= kVectorRegisters; ++rows) {
        std::optional<int64_t> added = rounding(*row_extent, rows);
        const int64_t accumulators = rows * vectors;
        if (!added || accumulators < kMinAccumulators) continue;
        if (accumulators > best_accumulators ||
            (accumulators == best_accumulators && *added < best_added)) {
          best = RegisterTile{*row, rows, *vec, vectors * lanes};
          best_accumulators = accumulators;
          best_added = *added;
        }
      }
    }
    return best;
  }

  // `sch` with the block padded to multiples of `multiple` along its extents of at least
  // `multiple` that it does not divide; nullopt when there are none or PadEinsum refuses.
  static std::optional<Schedule> PadToMultiples(const Schedule& sch, BlockRV block,
                                                int64_t multiple) {
    std::vector<int64_t> padding;
    bool any = false;
    for (const IterVar& iv : sch.Get(block)->block->iter_vars) {
      const int64_t* extent = AsConstInt(iv.dom.extent);
      bool pad = extent != nullptr && *extent >= multiple && *extent % multiple != 0;
      padding.push_back(pad ? multiple : 1);
      any |= pad;
    }
    if (!any) return std::nullopt;
    Schedule padded = sch.Copy();
    try {
      padded.PadEinsum(block, padding);
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
    return padded;
  }

  // `sch` with a copy (cache_read at the root, storage_align to an odd number of whole vectors) of
  // every read of `block` whose last index is a spatial iterator of at least a vector's extent,
  // over a last dimension that is no multiple of a vector, and whose data the block reuses at
  // least kMinRowReuse times (the extent of the spatial iterators it does not index): the copy
  // costs one pass over the operand. nullopt when no read qualifies.
  std::optional<Schedule> AlignOperandRows(const Schedule& sch, BlockRV block) const {
    constexpr int64_t kMinRowReuse = 64;
    const BlockNode* b = sch.Get(block)->block.get();
    std::vector<int> reads;
    for (size_t r = 0; r < b->reads.size(); ++r) {
      const BufferRegion& read = b->reads[r];
      const Buffer& buffer = read.buffer;
      if (buffer->ndim() < 2 || read.region.size() != static_cast<size_t>(buffer->ndim())) continue;
      const int64_t lanes = vector_bytes_ / buffer->dtype.bytes();
      const int64_t* row = AsConstInt(buffer->shape.back());
      const auto* last = read.region.back().min.as<VarNode>();
      if (row == nullptr || *row % lanes == 0 || last == nullptr) continue;
      const IterVar* iter = nullptr;
      int64_t reuse = 1;
      for (const IterVar& iv : b->iter_vars) {
        const int64_t* extent = AsConstInt(iv.dom.extent);
        if (extent == nullptr) return std::nullopt;
        if (iv.var.get() == last) iter = &iv;
        bool indexed = false;
        for (const Range& range : read.region) {
          indexed |= UsesVar(range.min, [&](const VarNode* v) { return v == iv.var.get(); });
        }
        if (iv.kind == IterKind::kSpatial && !indexed) reuse *= *extent;
      }
      const int64_t* extent = iter != nullptr ? AsConstInt(iter->dom.extent) : nullptr;
      if (iter == nullptr || iter->kind != IterKind::kSpatial || *extent < lanes ||
          reuse < kMinRowReuse || b->writes.empty() || b->writes[0].buffer.same_as(buffer)) {
        continue;
      }
      reads.push_back(static_cast<int>(r));
    }
    if (reads.empty()) return std::nullopt;
    Schedule aligned = sch.Copy();
    try {
      // cache_read swaps the read for the copy in place, so the indices stay valid.
      for (int r : reads) {
        const Buffer& buffer = aligned.Get(block)->block->reads[r].buffer;
        const int lanes = static_cast<int>(vector_bytes_ / buffer->dtype.bytes());
        BlockRV copy = aligned.CacheRead(block, r, StorageScope::kGlobal);
        // Rows a whole number of vectors apart, but an odd number of vectors: rows 2^k vectors
        // apart (1024 floats for 1023) share cache sets and evict each other as the register
        // tile walks down them (GEMM 1023: 7.70 ms with rows 1024 apart, 4.91 with 1040).
        aligned.StorageAlign(copy, 0, buffer->ndim() - 2, 2 * lanes, lanes);
      }
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
    return aligned;
  }

  // Appends the write-reuse variants of a tiled state to `out`.
  void AddWriteReuse(TiledState state, BlockRV block, std::vector<Schedule>* out) const {
    // Step 1. A single elementwise consumer serves as the write-back stage: move it under the
    // tile levels, or leave it.
    std::vector<BlockRV> consumers;
    try {
      consumers = state.sch.GetConsumers(block);
    } catch (const ScheduleError&) {
      return;
    }
    if (consumers.size() == 1 && IsElementwiseEpilogue(state.sch.Get(consumers[0])->block.get())) {
      ComputeAtLevels(state, consumers[0], out);
      out->push_back(std::move(state.sch));
      return;
    }
    // Step 2. Otherwise no cache, or a local write cache moved under the tile levels.
    out->push_back(state.sch.Copy());
    try {
      BlockRV cache = state.sch.CacheWrite(block, /*write_index=*/0, StorageScope::kLocal);
      ComputeAtLevels(state, cache, out);
    } catch (const ScheduleError&) {
      // the block cannot take a write cache (e.g. its output is written by another block too)
    }
  }

  // One variant per write-reuse level: `stage` under the last loop of spatial levels 1 and 2.
  void ComputeAtLevels(const TiledState& state, BlockRV stage, std::vector<Schedule>* out) const {
    for (size_t level : {size_t{0}, size_t{1}}) {
      if (level >= s_levels_.size() || state.tiles[s_levels_[level]].empty()) continue;
      Schedule variant = state.sch.Copy();
      try {
        variant.ReverseComputeAt(stage, state.tiles[s_levels_[level]].back(),
                                 /*preserve_unit_loops=*/true);
        out->push_back(std::move(variant));
      } catch (const ScheduleError&) {
        // e.g. the stage needs a region the tile does not finish
      }
    }
  }

  std::string structure_;
  int max_innermost_factor_;
  bool guarded_tiles_;
  int vector_bytes_;
  // Positions of the S and R levels in the structure.
  std::vector<size_t> s_levels_;
  std::vector<size_t> r_levels_;
};

}  // namespace

std::shared_ptr<ScheduleRule> MakeMultiLevelTiling(const CpuSpaceConfig& config) {
  return std::make_shared<MultiLevelTiling>(config);
}

}  // namespace tirtune
