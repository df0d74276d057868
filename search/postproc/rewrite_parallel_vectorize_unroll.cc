// RewriteParallelVectorizeUnroll: turns the root-block annotations of ParallelizeVectorizeUnroll
// into loop kinds, for every block under the root in program order (MetaSchedule's plan):
//  1. parallel: the outermost loops that are spatial, serial, unannotated and constant, each the
//     only statement of the previous one, are fused while their extent product stays within
//     meta_schedule.parallel (at least the first of extent above 1 is taken, with the unit loops
//     before it: [1, 56, 56, 64] under 32 fuses 1 x 56), and the fused loop runs in parallel;
//  2. vectorize: the innermost such loops are fused while the product stays within
//     meta_schedule.vectorize and every buffer the block touches is accessed contiguously along
//     them (as one run of memory), and the fused loop is vectorized; vectorizing is preferred
//     where both plans want a loop. When every loop of a block's nest qualifies for both (an
//     elementwise function), the whole nest is fused and split into a parallel outer loop and a
//     vectorized inner loop of the largest extent within the limit that divides it — unless that
//     extent is no multiple of 16 lanes (33 for 1023 × 1023 would read across rows with
//     divisions): then the innermost loop is split by whole vectors (the last one guarded), the
//     loops above it fused and parallel;
//  3. unroll: the outermost loop gets "pragma_auto_unroll_max_step" = meta_schedule.unroll_explicit
//     (when positive), which the lowering's UnrollLoops honours by unrolling every serial loop
//     inside whose body runs at most that many steps in all.
// The annotations are then removed. A step that the schedule rejects rejects the candidate.
//
// Before (root annotated parallel=32, vectorize=64, unroll_explicit=64):
//   for i0, j0, i1, k, i2, j1:  C[...] += ...       (extents 2, 4, 8, 64, 4, 16)
// After:
//   for i0_j0_i1_fused in parallel(64):  # pragma_auto_unroll_max_step = 64
//     for k, i2:
//       for j1 in vectorized(16):  C[...] += ...

#include <algorithm>

#include "../space/block_analysis.h"
#include "tirtune/search/space.h"

namespace tirtune {
namespace {

constexpr const char* kPragmaAutoUnroll = "pragma_auto_unroll_max_step";
// The lanes of a vector register of 4-byte elements on the widest CPU target (AVX-512); a
// vectorized width should be a multiple of it.
constexpr int64_t kVectorLanes = 16;

struct RootAnnotations {
  int64_t parallel = 0;  // 0: not requested
  int64_t vectorize = 0;
  int64_t unroll = 0;
};

// How many loops of a block's nest (outermost first) to fuse and parallelize, and how many
// (innermost last) to fuse and vectorize.
struct LoopPlan {
  size_t num_parallel = 0;
  size_t num_vectorize = 0;
  bool fuse_whole_nest = false;
};

// How many innermost loops every access of the block walks through contiguously: along them,
// each access either stays put or advances through one dense run of memory.
size_t ContiguousInnerLoops(const BlockRealizeNode* realize,
                            const std::vector<const ForNode*>& loops) {
  const BlockNode* block = realize->block.get();
  size_t result = loops.size();
  auto check = [&](const BufferRegion& access) {
    // Step 1. The element stride of each loop in this access (nullopt: not affine).
    std::vector<std::optional<int64_t>> strides;
    for (const ForNode* loop : loops) {
      std::optional<int64_t> stride = 0;
      int64_t dim_stride = 1;
      for (size_t d = access.region.size(); d-- > 0;) {
        // The index's coefficient of the loop, through the block's bindings.
        std::optional<int64_t> coef = 0;
        for (size_t i = 0; i < block->iter_vars.size() && coef; ++i) {
          std::optional<int64_t> outer =
              LinearCoefficient(access.region[d].min, block->iter_vars[i].var.get());
          std::optional<int64_t> inner =
              LinearCoefficient(realize->iter_values[i], loop->loop_var.get());
          if (!outer || !inner) {
            coef = std::nullopt;
          } else {
            *coef += *outer * *inner;
          }
        }
        if (!coef || *coef != 0) {
          stride = coef ? std::optional<int64_t>(*coef * dim_stride) : std::nullopt;
          break;
        }
        const int64_t* extent = AsConstInt(access.buffer->shape[d]);
        if (extent == nullptr) return size_t{0};
        dim_stride *= *extent;
      }
      strides.push_back(stride);
    }
    // Step 2. Count from the innermost loop while the strides chain up densely.
    size_t fusible = 0;
    std::optional<size_t> prev_used;
    for (size_t i = loops.size(); i-- > 0;) {
      if (!strides[i]) break;
      if (*strides[i] == 0) {
        ++fusible;
        continue;
      }
      if (!prev_used) {
        if (*strides[i] != 1 && fusible != 0) break;
      } else if (*strides[i] != *strides[*prev_used] * *AsConstInt(loops[*prev_used]->extent)) {
        break;
      }
      ++fusible;
      prev_used = i;
    }
    return fusible;
  };
  for (const BufferRegion& r : block->reads) result = std::min(result, check(r));
  for (const BufferRegion& w : block->writes) result = std::min(result, check(w));
  return result;
}

LoopPlan PlanLoops(const BlockRealizeNode* realize, const std::vector<const ForNode*>& loops,
                   const RootAnnotations& ann) {
  LoopPlan plan;
  const size_t n = loops.size();
  // Step 1. Parallel: outer plain spatial loops in a single-child chain, product within limit.
  const std::vector<int64_t> prefix = ParallelizablePrefixExtents(loops);
  if (ann.parallel > 0) plan.num_parallel = NumParallelLoops(prefix, ann.parallel);
  // Step 2. Vectorize: inner plain spatial loops, contiguous for every access, within limit.
  if (ann.vectorize > 0) {
    const size_t contiguous = ContiguousInnerLoops(realize, loops);
    int64_t product = 1;
    size_t whole = 0;  // loops that qualify ignoring the extent limit
    for (size_t i = n; i-- > 0 && whole < contiguous;) {
      if (!IsPlainSpatialLoop(loops[i]) || !HasSingleChild(loops[i])) break;
      ++whole;
      product *= *AsConstInt(loops[i]->extent);
      if (product <= ann.vectorize) plan.num_vectorize = whole;
    }
    if (plan.num_vectorize > 0) {
      int64_t vector_product = 1;
      for (size_t i = n - plan.num_vectorize; i < n; ++i) {
        vector_product *= *AsConstInt(loops[i]->extent);
      }
      if (vector_product == 1) plan.num_vectorize = 0;
    }
    // Step 3. An elementwise nest: every loop qualifies both ways and the nest is larger than one
    // vector, so it is fused whole and split.
    plan.fuse_whole_nest =
        ann.parallel > 0 && whole == n && plan.num_parallel > 0 && product > ann.vectorize;
  }
  // Step 4. Vectorizing wins where both want a loop; loops of extent 1 alone are no parallel loop.
  plan.num_parallel = std::min(plan.num_parallel, n - plan.num_vectorize);
  if (plan.num_parallel > 0 && prefix[plan.num_parallel - 1] == 1) plan.num_parallel = 0;
  return plan;
}

// The largest divisor of `extent` that is at most `limit`.
int64_t LargestDivisorWithin(int64_t extent, int64_t limit) {
  for (int64_t d = std::min(extent, limit); d > 1; --d) {
    if (extent % d == 0) return d;
  }
  return 1;
}

class RewriteParallelVectorizeUnroll : public Postproc {
 public:
  std::string name() const override { return "RewriteParallelVectorizeUnroll"; }

  bool Apply(Schedule& sch) override {
    const auto* root = sch.func()->body.as<BlockRealizeNode>();
    if (root == nullptr) return true;
    RootAnnotations ann;
    bool annotated = false;
    for (auto [key, field] :
         {std::pair{kAnnParallel, &ann.parallel}, std::pair{kAnnVectorize, &ann.vectorize},
          std::pair{kAnnUnrollExplicit, &ann.unroll}}) {
      auto it = root->block->annotations.find(key);
      if (it == root->block->annotations.end()) continue;
      annotated = true;
      if (const int64_t* value = AsConstInt(it->second)) *field = *value;
    }
    if (!annotated) return true;
    try {
      BlockRV root_rv = sch.GetBlock(root->block->name);
      for (const char* key : {kAnnParallel, kAnnVectorize, kAnnUnrollExplicit}) {
        if (sch.Get(root_rv)->block->annotations.count(key) > 0) sch.Unannotate(root_rv, key);
      }
      for (BlockRV block : sch.GetChildBlocks(root_rv)) RewriteBlock(sch, block, ann);
    } catch (const ScheduleError&) {
      return false;
    }
    return true;
  }

 private:
  static void RewriteBlock(Schedule& sch, BlockRV block, const RootAnnotations& ann) {
    std::vector<LoopRV> loop_rvs = sch.GetLoops(block);
    if (loop_rvs.empty()) return;
    std::vector<const ForNode*> loops;
    for (LoopRV loop : loop_rvs) loops.push_back(sch.Get(loop));
    LoopPlan plan = PlanLoops(sch.Get(block), loops, ann);
    LoopRV outermost = loop_rvs.front();
    if (plan.fuse_whole_nest) {
      // Step 1. An elementwise nest: one loop, split into parallel x vector.
      int64_t total = 1;
      for (const ForNode* loop : loops) total *= *AsConstInt(loop->extent);
      int64_t lanes = LargestDivisorWithin(total, ann.vectorize);
      // A width that is no multiple of a vector (33 for 1023 × 1023) would read across rows
      // with divisions: the innermost loop is split by whole vectors instead, the last guarded.
      const int64_t inner = *AsConstInt(loops.back()->extent);
      const int64_t width = std::min(ann.vectorize, inner / kVectorLanes * kVectorLanes);
      if (lanes % kVectorLanes != 0 && lanes < total && width >= kVectorLanes) {
        std::vector<LoopRV> parts = sch.Split(loop_rvs.back(), {std::monostate{}, width});
        std::vector<LoopRV> outer(loop_rvs.begin(), loop_rvs.end() - 1);
        outer.push_back(parts[0]);
        outermost = outer.size() == 1 ? outer[0] : sch.Fuse(outer);
        sch.Parallel(outermost);
        sch.Vectorize(parts[1]);
        AnnotateUnroll(sch, outermost, ann);
        return;
      }
      LoopRV fused = loop_rvs.size() == 1 ? loop_rvs[0] : sch.Fuse(loop_rvs);
      outermost = fused;
      if (lanes > 1 && lanes < total) {
        std::vector<LoopRV> parts = sch.Split(fused, {std::monostate{}, lanes});
        sch.Parallel(parts[0]);
        sch.Vectorize(parts[1]);
        outermost = parts[0];
      } else {
        sch.Parallel(fused);
      }
    } else {
      // Step 2. Parallel outer loops, vectorized inner loops.
      if (plan.num_vectorize > 0) {
        std::vector<LoopRV> inner(loop_rvs.end() - plan.num_vectorize, loop_rvs.end());
        LoopRV vector = inner.size() == 1 ? inner[0] : sch.Fuse(inner);
        sch.Vectorize(vector);
        if (plan.num_vectorize == loop_rvs.size()) outermost = vector;
      }
      if (plan.num_parallel > 0) {
        std::vector<LoopRV> outer(loop_rvs.begin(), loop_rvs.begin() + plan.num_parallel);
        outermost = outer.size() == 1 ? outer[0] : sch.Fuse(outer);
        sch.Parallel(outermost);
      }
    }
    // Step 3. Auto-unroll from the outermost loop down.
    AnnotateUnroll(sch, outermost, ann);
  }

  static void AnnotateUnroll(Schedule& sch, LoopRV outermost, const RootAnnotations& ann) {
    if (ann.unroll > 0 && sch.Get(outermost)->annotations.count(kPragmaAutoUnroll) == 0) {
      sch.Annotate(outermost, kPragmaAutoUnroll, ann.unroll);
    }
  }
};

}  // namespace

std::shared_ptr<Postproc> MakeRewriteParallelVectorizeUnroll() {
  return std::make_shared<RewriteParallelVectorizeUnroll>();
}

}  // namespace tirtune
